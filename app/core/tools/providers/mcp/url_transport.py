"""How Tebiki reaches a server by URL: Streamable HTTP, or the legacy HTTP+SSE transport that
older servers still serve (VS Code, Cursor, Zed and Goose connect to them too).

A URL entry says which with ``"type"``: ``"http"`` (Streamable HTTP), ``"sse"`` (legacy), or
nothing, and then Tebiki detects it: Streamable HTTP first, and when the server refuses that
POST the way a legacy server does (400, 404 or 405), the same URL once more as an SSE stream.
A server that is not an SSE server either fails that second attempt, and its failure is the
first one's (``ServerRun`` reports the Streamable HTTP failure). The status says "legacy SSE"
when a run uses it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.http_watch import recording_transport

# How a legacy HTTP+SSE server answers a Streamable HTTP POST to its SSE URL.
LEGACY_SSE_REFUSALS = frozenset({400, 404, 405})


def may_be_legacy_sse(config: McpServerConfig, http_status: int) -> bool:
    """Whether a URL server that failed to start with ``http_status`` is worth one try as a
    legacy SSE server: only when its entry did not name the transport."""
    return (config.transport == "http" and config.url_type is None
            and http_status in LEGACY_SSE_REFUSALS)


async def open_url_transport(sdk: SimpleNamespace, stack: contextlib.AsyncExitStack,
                             config: McpServerConfig, *, auth: Any, sse: bool,
                             note_status: Callable[[int], None]) -> tuple[Any, Any]:
    """The (read, write) streams of a URL server, its HTTP statuses reported to
    ``note_status``; ``sse`` picks the legacy transport."""
    def client(headers: dict[str, str] | None = None, timeout: Any = None,
               auth: Any = auth) -> Any:
        return sdk.httpx.AsyncClient(
            headers={**dict(config.headers), **(headers or {})},
            timeout=timeout or sdk.httpx.Timeout(30.0, read=300.0), auth=auth,
            transport=recording_transport(sdk.httpx, note_status))

    if sse:
        return await stack.enter_async_context(
            sdk.sse_client(str(config.url), auth=auth, httpx_client_factory=client))
    http_client = await stack.enter_async_context(client())
    return await stack.enter_async_context(
        sdk.streamable_http_client(config.url, http_client=http_client))
