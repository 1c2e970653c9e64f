"""``notifications/resources/list_changed``: a server whose first resource appears after start
gets its ``read_resource`` tool then, and the registry is told, as for tools/list_changed.
server-everything starts with resources already, so the quirks server (no resources until its
``add_resource`` tool runs) shows it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from tests.mcp_servers import quirks_server_entry


async def test_a_resource_added_after_start_offers_read_resource(project: Path):
    changed = asyncio.Event()
    configs = parse_mcp_config({"mcpServers": {"q": quirks_server_entry()}}).servers
    provider = McpProvider(configs, roots=[project], on_tools_changed=changed.set)
    ctx = ToolContext(project_root=project)
    try:
        await provider.start()
        assert "q__read_resource" not in {t.spec.name for t in provider.tools()}
        changed.clear()
        added = await provider.call("q", "add_resource", {}, ctx)
        assert added.content == "added"
        await asyncio.wait_for(changed.wait(), 20)
        tool = next(t for t in provider.tools() if t.spec.name == "q__read_resource")
        read = await tool.execute({"uri": "quirks://data.json"}, ctx)
        assert not read.is_error and '"answer": 42' in read.content, read.content
    finally:
        await provider.aclose()
