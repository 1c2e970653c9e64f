"""A stdio server that prints only lines that are not JSON-RPC and exits: its failure shows
those lines (the first few, and how many more) beside its stderr."""

from __future__ import annotations

import pytest

from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from tests.mcp_servers import quirks_server_entry


@pytest.mark.parametrize(("printed", "more"), [(1, None), (40, "… and 30 more")])
async def test_a_server_printing_only_garbage_shows_those_lines(printed, more):
    configs = parse_mcp_config({"mcpServers": {
        "q": quirks_server_entry("--garbage", str(printed))}}).servers
    provider = McpProvider(configs)
    try:
        await provider.start()
        status = provider.server_status("q")
    finally:
        await provider.aclose()
    assert status.state == "failed"
    assert "quirks-server: refusing to serve" in status.stderr_tail
    assert "the server exited during startup" in status.message
    assert "not JSON-RPC" in status.message
    assert "  garbage line 0" in status.message
    if more is None:
        assert "1 line on stdout that is not JSON-RPC" in status.message
    else:
        assert "  garbage line 9\n  … and 30 more" in status.message
        assert "garbage line 10" not in status.message
