"""Progress notifications reach the call's context through McpProvider.call, the path every
MCP tool the model calls takes (real server-everything, installed by `make mcp-reference`)."""

from __future__ import annotations

from pathlib import Path

from app.core.sandbox import Sandbox
from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.provider import McpProvider
from tests.mcp_reference import everything_server  # noqa: F401  (fixture)


async def test_progress_reaches_the_context_through_the_provider(
        everything_server: McpServerConfig, tmp_path: Path) -> None:  # noqa: F811
    provider = McpProvider([everything_server])
    await provider.start()
    try:
        assert provider.server_status("everything").state == "running"
        seen: list[tuple[float, float | None]] = []
        ctx = ToolContext(sandbox=Sandbox.off("test"), project_root=tmp_path,
                          progress=lambda done, total, _message: seen.append((done, total)))
        result = await provider.call("everything", "trigger-long-running-operation",
                                     {"duration": 1, "steps": 3}, ctx)
        assert not result.is_error, result.content
        assert seen, "no progress notification reached the context"
        assert seen[-1][1] == 3
    finally:
        await provider.aclose()
