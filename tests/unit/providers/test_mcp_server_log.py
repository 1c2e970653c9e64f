"""Server log messages are kept (a bounded ring) and the per-server level is sent with
``logging/setLevel``: against server-everything (its simulated logging) and the quirks server
(which reports the level it was set to and filters by it)."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from app.core.tools.providers.mcp.server_log import MAX_LOG_ENTRIES, ServerLog
from tests.mcp_reference import everything_entry
from tests.mcp_servers import quirks_server_entry


def _configs(**entries: dict) -> dict[str, McpServerConfig]:
    return parse_mcp_config({"mcpServers": entries}).servers


async def _entries_at_least(provider: McpProvider, server: str, n: int) -> None:
    """Until the server's log holds ``n`` entries (the status listener fires on each)."""
    arrived = asyncio.Event()

    def check(name: str) -> None:
        if name == server and len(provider.server_log(server).entries()) >= n:
            arrived.set()

    unsubscribe = provider.subscribe(check)
    try:
        check(server)
        await asyncio.wait_for(arrived.wait(), 20)
    finally:
        unsubscribe()


async def _level_until(provider: McpProvider, ctx: ToolContext, level: str) -> None:
    """The level is sent by the server's own task: ask the server until it has it."""
    deadline = time.monotonic() + 20
    while (await provider.call("q", "log_level", {}, ctx)).content != level:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)


async def test_the_level_is_sent_at_start_and_when_changed(project: Path):
    provider = McpProvider(_configs(q=quirks_server_entry()), roots=[project])
    ctx = ToolContext(project_root=project)
    try:
        await provider.start()
        assert (await provider.call("q", "log_level", {}, ctx)).content == "warning"
        await provider.call("q", "log", {}, ctx)
        await _entries_at_least(provider, "q", 2)
        assert [e.level for e in provider.server_log("q").entries()] == ["warning", "error"]
        assert "ERROR [quirks] error message" in provider.server_log("q").text()

        provider.server_log("q").set_level("debug")
        await _level_until(provider, ctx, "debug")
        await provider.call("q", "log", {}, ctx)
        await _entries_at_least(provider, "q", 7)
        assert [e.level for e in provider.server_log("q").entries()][2:] == [
            "debug", "info", "notice", "warning", "error"]
    finally:
        await provider.aclose()


async def test_server_everything_log_messages_are_kept(project: Path):
    provider = McpProvider(_configs(ev=everything_entry()), roots=[project])
    provider.server_log("ev").set_level("debug")  # its messages come at random levels
    ctx = ToolContext(project_root=project)
    try:
        await provider.start()
        toggled = await provider.call("ev", "toggle-simulated-logging", {}, ctx)
        assert not toggled.is_error, toggled.content
        await _entries_at_least(provider, "ev", 1)
        # Its level is random, and one of its texts is spelt "Alert level-message".
        first = provider.server_log("ev").entries()[0]
        assert re.search(r"\b[Ll]evel[- ]message\b", first.text), first.text
        assert first.level.lower() in first.text.lower()
    finally:
        await provider.aclose()


def test_the_ring_keeps_the_last_messages_and_refuses_unknown_levels():
    log = ServerLog()
    for i in range(MAX_LOG_ENTRIES + 20):
        log.note({"level": "info", "data": {"n": i}})
    entries = log.entries()
    assert len(entries) == MAX_LOG_ENTRIES and entries[-1].text == '{"n": 519}'
    with pytest.raises(ValueError, match="unknown log level"):
        log.set_level("verbose")
