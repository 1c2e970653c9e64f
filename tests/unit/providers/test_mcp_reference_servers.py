"""The reference servers `make mcp-reference` installs start from their fixtures
(tests/mcp_reference.py) and answer a call each: the fixtures other MCP tests build on."""

from __future__ import annotations

import pytest

from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.connection import McpConnection
from tests.mcp_reference import (  # noqa: F401  (fixtures)
    everything_server,
    filesystem_server,
    git_server,
    time_server,
)


async def _call(config: McpServerConfig, tool: str, arguments: dict) -> str:
    connection = McpConnection(config)
    await connection.start()
    try:
        assert connection.running, connection.message
        result = await connection.call_tool(tool, arguments, timeout_s=30)
        assert not result.is_error, result.content
        return result.content
    finally:
        await connection.stop()


async def test_everything(everything_server: McpServerConfig) -> None:  # noqa: F811
    assert await _call(everything_server, "echo", {"message": "hi"}) == "Echo: hi"


async def test_filesystem(filesystem_server: McpServerConfig, tmp_path) -> None:  # noqa: F811
    (tmp_path / "hello.txt").write_text("hello")
    text = await _call(filesystem_server, "list_directory", {"path": str(tmp_path)})
    assert "[FILE] hello.txt" in text


async def test_git(git_server: McpServerConfig, tmp_path) -> None:  # noqa: F811
    text = await _call(git_server, "git_status", {"repo_path": str(tmp_path / "repo")})
    assert "branch" in text.lower()


async def test_time(time_server: McpServerConfig) -> None:  # noqa: F811
    text = await _call(time_server, "get_current_time", {"timezone": "UTC"})
    assert '"timezone": "UTC"' in text


@pytest.mark.parametrize("ci", ["1", ""])
def test_a_missing_install_fails_under_ci_and_skips_locally(monkeypatch, tmp_path, ci) -> None:
    import tests.mcp_reference as reference

    monkeypatch.setattr(reference, "EVERYTHING_JS", tmp_path / "missing.js")
    monkeypatch.setenv("CI", ci)
    expected = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(expected, match="make mcp-reference"):
        reference.everything_entry()
