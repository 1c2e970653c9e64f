"""A stdio server that crashed is restarted at the next call, after a backoff, and that call's
result says so; the call that was running when it died is never sent again."""

from __future__ import annotations

import time
from pathlib import Path

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.crash_restart import (
    FIRST_DELAY_S,
    HEALTHY_RUN_S,
    MAX_DELAY_S,
    CrashRestarts,
)
from app.core.tools.providers.mcp.provider import McpProvider
from tests.mcp_servers import demo_server_entry


async def test_the_next_call_restarts_a_crashed_server_after_the_backoff(project: Path):
    configs = parse_mcp_config({"mcpServers": {"demo": demo_server_entry()}}).servers
    provider = McpProvider(configs, roots=[project])
    ctx = ToolContext(project_root=project)
    try:
        await provider.start()
        first_pid = (await provider.call("demo", "pid", {}, ctx)).content
        crash = await provider.call("demo", "crash", {}, ctx)
        crashed_at = time.monotonic()
        assert crash.is_error
        assert "may or may not have run" in crash.content and "not sent again" in crash.content
        status = provider.server_status("demo")
        assert status.state == "failed" and "restarts it at the next call" in status.message

        echo = await provider.call("demo", "echo", {"text": "back"}, ctx)
        assert time.monotonic() - crashed_at >= FIRST_DELAY_S * 0.9  # waited the backoff
        assert not echo.is_error, echo.content
        assert echo.content == ("[MCP server 'demo' had stopped; Tebiki restarted it for this "
                                "call.]\n\nback")
        assert provider.server_status("demo").state == "running"
        second_pid = (await provider.call("demo", "pid", {}, ctx)).content
        assert second_pid != first_pid  # one restart: the crash call was not replayed
        assert "restarted" not in second_pid  # only the call that restarted it says so
    finally:
        await provider.aclose()


def test_the_backoff_doubles_is_capped_and_resets_after_a_healthy_run():
    now = [1000.0]
    restarts = CrashRestarts(clock=lambda: now[0])
    waits = []
    for _ in range(7):
        waits.append(restarts.wait_s(now[0] - 5, now[0]))  # crashed just now, after 5 s
        restarts.restarted(running=True)
    assert waits == [1, 2, 4, 8, 16, MAX_DELAY_S, MAX_DELAY_S]
    assert restarts.wait_s(now[0] - HEALTHY_RUN_S, now[0]) == FIRST_DELAY_S
    # A failed restart: due again, counted from the failure.
    restarts.restarted(running=False)
    assert restarts.pending
    now[0] += 1.5
    assert restarts.wait_s(None, None) == 0.5
