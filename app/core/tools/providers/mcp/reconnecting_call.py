"""Calling a tool on one of the MCP provider's servers, reconnecting a lost server first.

An idle HTTP server is pinged, so one that died is marked failed ("lost"). A call to a lost
server, or one that fails without ever reaching the server (connection refused, 404 on an
expired session, a POST cancelled before it was sent because the transport died, see
``mcp.http_watch``), restarts the connection once; the call is retried only when it surely did
not reach the server. A stdio server that crashed is restarted at the next call, after a
backoff (``mcp.crash_restart``), and that call's result says so. Concurrent callers share one
reconnect.

Separate from ``mcp`` (which runs the servers and turns their tools into Tebiki tools) because
this is the path of one call, in the caller's task, with its own retry rule. ``McpProvider``
hands its calls (and its tools' calls) to an ``McpReconnectingCalls``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from app.core.tools.base import ToolContext, ToolResult
from app.core.tools.providers.mcp.connection import ConnectionLookup, McpConnection
from app.core.tools.providers.mcp.connection_texts import restarted_note
from app.core.tools.providers.mcp.http_watch import watch_call


class McpReconnectingCalls:
    """``call`` for the provider's tools, on each server's current connection."""

    def __init__(self, connection: ConnectionLookup) -> None:
        # The server's current connection (a restart or a new configuration replaces it).
        self._connection = connection
        # The reconnect under way per server name, shared by the calls that wait for it.
        self._reconnecting: dict[str, asyncio.Future[None]] = {}

    async def call(self, server: str, remote_name: str, tool_input: Mapping[str, Any],
                   ctx: ToolContext, *, label: str | None = None) -> ToolResult:
        """Call ``remote_name`` on ``server``. Timeout: the server's ``"timeout"`` when set,
        else the tool's configured ``shell_timeout_s`` (default 30 s).

        A lost HTTP server is reconnected first; a call that fails without reaching the server
        reconnects and is sent once more (never a call that may have run)."""
        conn = self._connection(server)
        if conn is None:
            return ToolResult.error(f"MCP server {server!r} is no longer configured, so "
                                    f"{label or remote_name} cannot run. Use another tool.")
        timeout = conn.config.timeout_s or ctx.shell_timeout_s
        restarted = False
        if conn.lost or conn.restart_due:
            crashed = conn.restart_due
            conn = await self._reconnect(conn, conn.runs)
            restarted = crashed and conn.running
        runs, was_running = conn.runs, conn.running
        with watch_call() as outcome:
            result = await conn.call_tool(remote_name, tool_input, timeout_s=timeout,
                                          max_output_chars=ctx.max_output_bytes, label=label,
                                          progress=ctx.progress)
        if restarted:  # the card and the model are told the server had stopped
            result = replace(result, content=f"{restarted_note(server)}\n\n{result.content}")
        unsent = outcome.never_reached or (
            was_running and outcome.nothing_sent and conn.config.transport != "stdio")
        if not (result.is_error and unsent):
            return result
        conn = await self._reconnect(conn, runs)
        if not conn.running:
            return ToolResult.error(
                f"MCP server {server!r} could not be reached, so {label or remote_name} did "
                f"not run; reconnecting failed: {conn.message or conn.state}. Ask the user "
                "to check the server in Settings → MCP servers.")
        return await conn.call_tool(remote_name, tool_input, timeout_s=timeout,
                                    max_output_chars=ctx.max_output_bytes, label=label,
                                    progress=ctx.progress)

    async def _reconnect(self, conn: McpConnection, runs: int) -> McpConnection:
        """Restart ``conn`` unless it was restarted since ``runs`` (concurrent callers share
        one reconnect); returns the server's current connection."""
        pending = self._reconnecting.get(conn.name)
        if pending is None and conn.runs == runs and self._connection(conn.name) is conn:
            pending = asyncio.ensure_future(conn.reconnect())
            self._reconnecting[conn.name] = pending
            name = conn.name

            def done(_f: asyncio.Future[None]) -> None:
                self._reconnecting.pop(name, None)

            pending.add_done_callback(done)
        if pending is not None:
            await asyncio.shield(pending)
        current = self._connection(conn.name)
        return conn if current is None else current
