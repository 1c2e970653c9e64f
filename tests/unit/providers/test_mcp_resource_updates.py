"""Resource subscriptions against the real reference server-everything (tests/.mcp-reference),
which advertises ``resources.subscribe`` and, once its ``toggle-subscriber-updates`` tool is
called, sends ``notifications/resources/updated`` for every resource the client subscribed
to: a resource Tebiki read is subscribed to, its update marks it and reaches the listeners, and
reading it again makes it fresh."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from tests.mcp_reference import everything_entry


@pytest.fixture
async def everything(project: Path):
    provider = McpProvider(parse_mcp_config({"mcpServers": {"ev": everything_entry()}}).servers,
                           roots=[project])
    await provider.start()
    assert provider.server_status("ev").state == "running", provider.server_status("ev")
    yield provider
    await provider.aclose()


async def test_a_read_resource_is_subscribed_and_its_update_is_heard(everything, project):
    read_uri = (await everything.list_resources("ev"))[0]["uri"]
    updates = everything.queries.resource_updates("ev")
    heard: list[str] = []
    arrived = asyncio.Event()

    def on_update(uri: str) -> None:
        heard.append(uri)
        arrived.set()

    stop = updates.listen(on_update)
    await everything.read_resource("ev", read_uri)  # subscribes
    assert updates.watched == {read_uri} and not updates.updated
    started = await everything.call("ev", "toggle-subscriber-updates", {},
                                    ToolContext(project_root=project))
    assert not started.is_error, started.content
    await asyncio.wait_for(arrived.wait(), 20)  # the first is sent at once, then every 5 s
    assert set(heard) == {read_uri} and updates.updated == {read_uri}
    await everything.read_resource("ev", read_uri)  # read again: fresh
    assert not updates.updated
    stop()

