"""The MCP provider's resources and prompts, asked for by server name (the resource browser,
the prompt picker, ``<server>__read_resource``).

Separate from ``mcp`` (which turns servers' tools into Tebiki tools and runs the servers)
because these are plain requests to one running server, with no part in the tool list or the
lifecycle. ``McpProvider`` hands its queries to an ``McpResourceQueries``; the requests
themselves are in ``mcp.resources``. Each waits, as a tool call does, for a restart into a new
project folder that is due (``McpConnection.request_slot``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio

from app.core.tools.providers.mcp import resources as mcp_resources
from app.core.tools.providers.mcp.connection import ConnectionLookup, McpConnection
from app.core.tools.providers.mcp.resource_updates import ResourceUpdates
from app.core.tools.providers.mcp.resources import McpRequestError


class McpResourceQueries:
    """Resources and prompts of the provider's servers. Every method raises McpRequestError
    (a clear message) whenever the server cannot answer."""

    def __init__(self, connection: ConnectionLookup, request_timeout_s: float) -> None:
        # The server's current connection (a restart or a new configuration replaces it).
        self._connection = connection
        self._request_timeout_s = request_timeout_s

    def _configured(self, server: str) -> McpConnection:
        conn = self._connection(server)
        if conn is None:
            raise McpRequestError(f"MCP server {server!r} is not configured.")
        return conn

    def resource_updates(self, server: str) -> ResourceUpdates:
        """The resources read from ``server``, which are updated, and who is told."""
        return self._configured(server).resource_updates

    async def release_resource(self, server: str, uri: str) -> None:
        """One holder of ``server``'s ``uri`` (``ResourceUpdates.hold``) let go of it; the
        last one unsubscribes. Quiet when the server is gone."""
        conn = self._connection(server)
        if conn is None:
            return
        with anyio.move_on_after(self._request_timeout_s):
            await conn.resource_updates.release(conn.session, uri)

    async def list_resources(self, server: str) -> list[dict[str, Any]]:
        """The server's resources (wire dicts: ``uri``, ``name``, ``mimeType``…); [] when it
        offers none."""
        conn = self._configured(server)
        async with conn.request_slot():
            return await mcp_resources.list_resources(conn, self._request_timeout_s)

    async def list_resource_templates(self, server: str) -> list[dict[str, Any]]:
        conn = self._configured(server)
        async with conn.request_slot():
            return await mcp_resources.list_resource_templates(conn, self._request_timeout_s)

    async def read_resource(self, server: str, uri: str, *,
                            timeout_s: float | None = None) -> list[dict[str, Any]]:
        """The resource's ``contents`` (wire dicts with ``text`` or ``blob``)."""
        conn = self._configured(server)
        async with conn.request_slot():
            return await mcp_resources.read_resource(conn, uri,
                                                     timeout_s or self._request_timeout_s)

    async def list_prompts(self, server: str) -> list[dict[str, Any]]:
        """The server's prompts (``name``, ``description``, ``arguments``); [] if none."""
        conn = self._configured(server)
        async with conn.request_slot():
            return await mcp_resources.list_prompts(conn, self._request_timeout_s)

    async def get_prompt(self, server: str, name: str,
                         arguments: Mapping[str, str] | None = None) -> dict[str, Any]:
        """prompts/get: ``{"description"?, "messages": [{"role", "content"}…]}``."""
        conn = self._configured(server)
        async with conn.request_slot():
            return await mcp_resources.get_prompt(conn, name, arguments or {},
                                                  self._request_timeout_s)

    async def complete_prompt_argument(self, server: str, prompt: str, argument: str,
                                       value: str, context: Mapping[str, str]) -> list[str]:
        """The server's suggestions for a prompt argument being typed ([] if it has none)."""
        conn = self._configured(server)
        return await mcp_resources.complete_prompt_argument(
            conn, prompt, argument, value, context, self._request_timeout_s)
