"""Dead HTTP servers and expired sessions (issue 19), against the demo server run as a real
streamable-HTTP subprocess that is killed and restarted on the same port: a server killed while
idle is noticed; a call that never reached the server reconnects and is retried once, a call
that did reach it is not; after the server comes back calls work without a manual restart; a
401 at start says the server needs sign-in."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.http_watch import CallOutcome
from app.core.tools.providers.mcp.provider import McpProvider
from tests.mcp_servers.http_demo import HttpDemo

WAIT_S = 30.0


def _configs(**entries: dict) -> dict[str, McpServerConfig]:
    return parse_mcp_config({"mcpServers": entries}).servers


async def _until(condition: Callable[[], bool], what: str) -> None:
    """Poll a condition the code under test changes on its own schedule (pings)."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(project_root=project)


@pytest.fixture
def http_demo() -> Iterator[HttpDemo]:
    server = HttpDemo()
    yield server
    server.kill()


async def _provider(server: HttpDemo, **options: object) -> McpProvider:
    provider = McpProvider(_configs(web={"url": server.url}), **options)  # type: ignore[arg-type]
    await provider.start()
    assert provider.server_status("web").state == "running", provider.server_status("web")
    return provider


async def test_a_server_killed_while_idle_is_noticed_and_calls_work_once_it_is_back(
        http_demo, ctx):
    await http_demo.start()
    provider = await _provider(http_demo, keepalive_s=0.1)
    try:
        http_demo.kill()
        await _until(lambda: provider.server_status("web").state == "failed", "failed state")
        status = provider.server_status("web")
        assert "reconnects at the next call" in status.message
        assert status.tool_count > 0  # its tools stay listed, answering errors

        down = await provider.call("web", "add", {"a": 1, "b": 2}, ctx)
        assert down.is_error and "unreachable" in down.content
        assert provider.server_status("web").tool_count > 0  # still listed after the retry

        await http_demo.start()  # the same port: no manual restart in Tebiki
        back = await provider.call("web", "add", {"a": 1, "b": 2}, ctx)
        assert not back.is_error and back.content.startswith("3"), back.content
        assert provider.server_status("web").state == "running"
    finally:
        await provider.aclose()


async def test_an_expired_session_reconnects_and_the_call_runs_once(http_demo, ctx):
    await http_demo.start()
    provider = await _provider(http_demo, keepalive_s=3600)  # no ping notices the restart
    try:
        http_demo.kill()
        await http_demo.start()  # a new process: it answers 404 to the old session
        assert provider.server_status("web").state == "running"
        assert http_demo.process is not None
        result = await provider.call("web", "pid", {}, ctx)
        assert not result.is_error, result.content
        assert result.content.split()[0] == str(http_demo.process.pid)
        assert provider._connections["web"].runs == 2  # reconnected exactly once
    finally:
        await provider.aclose()


async def test_a_call_that_reached_the_server_is_not_retried(http_demo, ctx):
    await http_demo.start()
    provider = await _provider(http_demo, keepalive_s=3600)
    try:
        result = await provider.call("web", "crash", {}, ctx)  # the server dies mid-call
        assert result.is_error
        assert provider._connections["web"].runs == 1  # no reconnect, so no second crash
        await http_demo.start()
        back = await provider.call("web", "echo", {"text": "again"}, ctx)
        assert not back.is_error and back.content.startswith("again"), back.content
    finally:
        await provider.aclose()


async def test_a_call_cancelled_before_it_went_out_by_a_dying_transport_reconnects_and_runs(
        http_demo, ctx, monkeypatch):
    """The interleaving behind a flaky "could not run echo: MCPError: Connection closed": a
    POST that fails after reaching the server (the connection drops before the answer) ends
    the SDK's whole streamable-HTTP transport, and the transport cancels every other POST in
    flight — here one still waiting to go out (as while connecting). That call never reached
    the server, so it reconnects and runs; the one that did reach it is not retried.

    The order is forced with an event: the echo POST is held before a byte is sent until the
    other call breaks the transport."""
    import httpx2

    original = httpx2.AsyncHTTPTransport.handle_async_request
    held = asyncio.Event()

    async def handle(self: object, request: httpx2.Request) -> httpx2.Response:
        body = request.content if request.method == "POST" else b""
        if b'"echo"' in body and not held.is_set():
            held.set()
            await asyncio.Event().wait()  # never sent: only the transport's end cancels it
        response = await original(self, request)  # type: ignore[arg-type]
        if b'"slow"' in body:  # the server has it and is working on it; then the line drops
            await response.aclose()
            raise httpx2.ReadError("the connection dropped before the answer")
        return response

    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", handle)
    await http_demo.start()
    provider = await _provider(http_demo, keepalive_s=3600)
    try:
        echo = asyncio.create_task(provider.call("web", "echo", {"text": "again"}, ctx))
        await held.wait()
        slow = await provider.call("web", "slow", {"seconds": 0.1}, ctx)
        assert slow.is_error  # it reached the server: not sent again
        back = await echo
        assert not back.is_error and back.content.startswith("again"), back.content
        assert provider._connections["web"].runs == 2  # one reconnect, for the echo only
    finally:
        await provider.aclose()


async def test_a_401_at_start_says_the_server_needs_sign_in(ctx):
    server = HttpDemo("--require-token", "s3cret")
    await server.start()
    provider = McpProvider(_configs(
        web={"url": server.url},
        signed={"url": server.url, "headers": {"Authorization": "Bearer s3cret"}}))
    try:
        await provider.start()
        status = provider.server_status("web")
        assert (status.state, status.needs_auth) == ("failed", True)
        assert "needs sign-in" in status.message and "401" in status.message
        assert provider.server_status("signed").state == "running"
        assert provider.server_status("signed").needs_auth is False
        # A call to it does not loop reconnecting: it says the server is unavailable.
        failed = await provider.call("web", "add", {"a": 1, "b": 2}, ctx)
        assert failed.is_error and "needs sign-in" in failed.content
    finally:
        await provider.aclose()
        server.kill()


def test_only_a_call_that_surely_never_reached_the_server_counts_as_unsent():
    assert CallOutcome(refused=1).never_reached
    assert CallOutcome(expired=1).never_reached
    assert not CallOutcome().never_reached
    assert not CallOutcome(refused=1, delivered=1).never_reached
    assert CallOutcome(abandoned=1).never_reached  # given up before a byte was sent
    assert not CallOutcome(abandoned=1, delivered=1).never_reached
    assert CallOutcome().nothing_sent
    assert not CallOutcome(refused=1).nothing_sent and not CallOutcome(delivered=1).nothing_sent


async def test_pings_do_not_disturb_a_long_call(http_demo, ctx):
    await http_demo.start()
    provider = await _provider(http_demo, keepalive_s=0.05)
    try:
        result = await provider.call("web", "slow", {"seconds": 1.0}, ctx)
        assert not result.is_error and result.content.startswith("slept 1.0s"), result.content
        assert provider.server_status("web").state == "running"
        assert provider._connections["web"].runs == 1
    finally:
        await provider.aclose()
