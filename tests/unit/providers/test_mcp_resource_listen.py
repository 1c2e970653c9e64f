"""Resource updates on revision 2026-07-28 against a real server on the SDK in the lock
(tests/mcp_servers/modern_server.py, stdio and Streamable HTTP): there is no
``resources/subscribe`` there, so a resource Tebiki reads is followed on a
``subscriptions/listen`` stream naming it; the server's update reaches the listeners, a
resource let go of is no longer followed, and the stream follows only what is watched."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

import pytest

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from tests.unit.providers.test_mcp_modern_revision import (  # noqa: F401  (fixture)
    MODERN,
    http_url,
)

NOTE = "note://current"


async def until(condition: Callable[[], bool], timeout: float = 20) -> None:
    """Wait for ``condition`` (set by the server's task on this loop)."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("kind", ["stdio", "http"])
async def test_a_read_resource_is_followed_through_subscriptions_listen(kind, request,
                                                                        project):
    server: dict[str, Any] = {"command": sys.executable, "args": [str(MODERN)]} \
        if kind == "stdio" else {"type": "http", "url": request.getfixturevalue("http_url")}
    provider = McpProvider(parse_mcp_config({"mcpServers": {"modern": server}}).servers)
    await provider.start()
    ctx = ToolContext(project_root=project)
    try:
        updates = provider.queries.resource_updates("modern")
        heard: list[str] = []
        stop = updates.listen(heard.append)
        first = await provider.read_resource("modern", NOTE)
        assert first[0]["text"] == "first note" or kind == "http"  # http: a shared server
        assert not updates.subscribed(NOTE)  # no resources/subscribe on 2026-07-28
        await until(lambda: updates.listened == (NOTE,))

        changed = await provider.call("modern", "update_note", {"text": "second note"}, ctx)
        assert not changed.is_error, changed.content
        await until(lambda: heard == [NOTE])
        assert updates.updated == {NOTE}
        again = await provider.read_resource("modern", NOTE)
        assert again[0]["text"] == "second note" and not updates.updated

        await provider.queries.release_resource("modern", NOTE)  # no one holds it now
        await until(lambda: updates.listened == ())
        await provider.call("modern", "update_note", {"text": "third note"}, ctx)
        assert NOTE not in updates.watched and heard == [NOTE]
        stop()
    finally:
        await provider.aclose()
