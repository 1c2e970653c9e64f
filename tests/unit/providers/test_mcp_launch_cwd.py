"""Where a stdio MCP server starts (issue 19): its configured ``cwd``, else the open project
folder, else Tebiki's folder — and a sandboxed server is never given write access to the
project just because it starts there."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from app.core.sandbox import Sandbox, probe_sandbox
from app.core.sensitive_paths import sensitive_paths
from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.transport import stdio_launch
from tests.mcp_servers import demo_server_entry

STATUS = probe_sandbox()


def _config(**extra: object) -> McpServerConfig:
    return parse_mcp_config({"mcpServers": {"s": demo_server_entry(**extra)}}).servers["s"]


def _sandbox() -> Sandbox:
    return Sandbox(STATUS, False, sensitive_paths(extra=[os.environ["TEBIKI_DATA_DIR"]]))


def _launch(config: McpServerConfig, default_cwd: Path | None):
    return stdio_launch(config, _sandbox(), {}, {"PATH": os.environ.get("PATH", "")},
                        default_cwd)


def test_without_a_cwd_it_starts_in_the_project(project):
    assert _launch(_config(), project).cwd == str(project)


def test_a_configured_cwd_wins(project, tmp_path):
    assert _launch(_config(cwd=str(tmp_path)), project).cwd == str(tmp_path)


def test_no_project_or_a_missing_one_leaves_the_default(tmp_path):
    assert _launch(_config(), None).cwd is None
    assert _launch(_config(), tmp_path / "gone").cwd is None


@pytest.mark.skipif(not STATUS.available, reason=f"no sandbox here: {STATUS.reason}")
def test_a_sandboxed_server_starts_in_the_project_without_writing_there(visible):
    project = visible / "project"
    project.mkdir()
    launch = _launch(_config(sandbox={}), project)
    assert launch.sandboxed and launch.cwd == str(project)
    args = launch.args
    assert args[args.index("--chdir") + 1] == str(project)
    binds = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--bind"]
    assert str(project) not in binds  # read-only at most: the config granted no writes
    configured = _launch(_config(sandbox={}, cwd=str(project)), None).args
    assert str(project) in [configured[i + 1] for i, arg in enumerate(configured[:-1])
                            if arg == "--bind"]  # (the check above can fail)
    assert args[args.index("--") + 1] == os.path.abspath(sys.executable)
