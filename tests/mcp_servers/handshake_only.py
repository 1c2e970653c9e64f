"""Make a test server on the SDK in the lock speak only the handshake revisions (2025-11-25 and
older), as servers on older SDKs do. The servers that ask the client back with standalone
requests mid-call (``ctx.session.create_message`` …) or notify on their own are written for
those revisions; on 2026-07-28 the SDK refuses both.

The SDK serves a stdio connection in the era of the client's first request, and an HTTP
request carrying a 2026-07-28 ``MCP-Protocol-Version`` header in that era; this process serves
both in the handshake era instead, as an older server does (``server/discover`` is unknown over
stdio; over HTTP it is a request without a session, answered 400), so a client falls back to
``initialize``."""

from __future__ import annotations

from typing import Any

import mcp.server.lowlevel.server as lowlevel_server
from mcp.server.runner import _serve_legacy_stream
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

_HEADER = b"mcp-protocol-version"
_handle_http = StreamableHTTPSessionManager._handle_request


async def _serve_handshake_era(server: Any, read_stream: Any, write_stream: Any,
                               session_id: str | None = None, **options: Any) -> None:
    try:
        await _serve_legacy_stream(server, read_stream, write_stream, session_id=session_id,
                                   **options)
    finally:
        await write_stream.aclose()


async def _handle_http_handshake_era(manager: Any, scope: Any, receive: Any, send: Any) -> None:
    """An HTTP request, its newer revision header dropped: the handshake era's handling."""
    if scope.get("type") == "http":
        scope = dict(scope, headers=[
            (key, value) for key, value in scope["headers"]
            if key != _HEADER or value.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS])
    await _handle_http(manager, scope, receive, send)


def speak_handshake_era_only() -> None:
    """Serve this process's MCP servers in the handshake era. Called by a test server's
    ``__main__`` only: a test that imports the server module keeps the SDK as it is."""
    lowlevel_server.serve_dual_era_loop = _serve_handshake_era  # type: ignore[assignment]
    StreamableHTTPSessionManager._handle_request = _handle_http_handshake_era  # type: ignore[method-assign]
