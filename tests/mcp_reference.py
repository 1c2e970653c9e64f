"""The MCP reference servers nobody here wrote, installed by `make mcp-reference` into
tests/.mcp-reference (pinned versions; see the Makefile): npm server-everything and
server-filesystem, PyPI mcp-server-git and mcp-server-time (in their own venv).

Each fixture returns the server's ``McpServerConfig``. When the install is missing the fixture
fails under CI (``CI`` set: a missing install must never pass as skipped tests) and skips
locally, saying how to install it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.config.schema import parse_mcp_config

REFERENCE_DIR = Path(__file__).with_name(".mcp-reference")
NPM_PACKAGES = REFERENCE_DIR / "node" / "node_modules" / "@modelcontextprotocol"
EVERYTHING_JS = NPM_PACKAGES / "server-everything" / "dist" / "index.js"
FILESYSTEM_JS = NPM_PACKAGES / "server-filesystem" / "dist" / "index.js"
PY_BIN = REFERENCE_DIR / "venv" / "bin"


def _require(path: Path) -> None:
    if path.exists():
        return
    message = (f"MCP reference server missing: {path} does not exist. Install the reference "
               "servers with `make mcp-reference` (make test does it first).")
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        message = "node is not installed (`make mcp-reference` installs nodejs when root)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return node


def config(name: str, entry: dict[str, Any]) -> McpServerConfig:
    return parse_mcp_config({"mcpServers": {name: entry}}).servers[name]


def everything_entry() -> dict[str, Any]:
    _require(EVERYTHING_JS)
    return {"command": _node(), "args": [str(EVERYTHING_JS), "stdio"]}


def filesystem_entry(*folders: Path) -> dict[str, Any]:
    _require(FILESYSTEM_JS)
    return {"command": _node(), "args": [str(FILESYSTEM_JS), *map(str, folders)]}


def git_entry(repository: Path) -> dict[str, Any]:
    _require(PY_BIN / "mcp-server-git")
    return {"command": str(PY_BIN / "mcp-server-git"), "args": ["--repository", str(repository)]}


def time_entry() -> dict[str, Any]:
    _require(PY_BIN / "mcp-server-time")
    return {"command": str(PY_BIN / "mcp-server-time"), "args": ["--local-timezone", "UTC"]}


@pytest.fixture
def everything_server() -> McpServerConfig:
    return config("everything", everything_entry())


@pytest.fixture
def filesystem_server(tmp_path: Path) -> McpServerConfig:
    return config("files", filesystem_entry(tmp_path))


@pytest.fixture
def git_server(tmp_path: Path) -> McpServerConfig:
    import subprocess

    repository = tmp_path / "repo"
    repository.mkdir()
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    return config("git", git_entry(repository))


@pytest.fixture
def time_server() -> McpServerConfig:
    return config("time", time_entry())


class ConnectionTool:
    """One tool of a started ``McpConnection`` as a registry tool, passing the call's progress
    callback on: the call path McpProvider takes, without the provider around it."""

    def __init__(self, connection: Any, remote_name: str, *, name: str | None = None) -> None:
        from app.core.tools.base import RiskLevel, ToolCategory, ToolSpec

        self.connection = connection
        self.remote_name = remote_name
        self.spec = ToolSpec(name=name or remote_name.replace("-", "_"),
                             description=f"{remote_name} of a reference server",
                             input_schema={"type": "object"},
                             category=ToolCategory.COMPOSITE, risk=RiskLevel.HIGH,
                             server_id=connection.config.name)

    async def execute(self, input: Any, ctx: Any) -> Any:
        return await self.connection.call_tool(self.remote_name, input, timeout_s=60,
                                               label=self.spec.name, progress=ctx.progress)
