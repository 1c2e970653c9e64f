"""The loopback redirect target of an OAuth sign-in (RFC 8252 §7.3): a tiny HTTP listener on
127.0.0.1 that receives the browser's ``GET /callback?code=…&state=…`` and answers with a page
saying the tab can be closed.

Only the first callback counts. Anything that is not a well-formed ``GET`` gets a 400 and is
otherwise ignored, so a stray request (a favicon, a port scanner) cannot end the sign-in; an
``error=`` callback (the person refused) ends it with that error.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
from urllib.parse import parse_qs, urlsplit

from mcp.shared.auth import AuthorizationCodeResult

log = logging.getLogger(__name__)

CALLBACK_PATH = "/callback"
MAX_REQUEST_HEAD = 16_384
READ_TIMEOUT_S = 10.0


class CallbackRefused(Exception):
    """The authorization server sent the browser back with an error."""


class LoopbackCallback:
    def __init__(self) -> None:
        self._result: asyncio.Future[AuthorizationCodeResult] = \
            asyncio.get_running_loop().create_future()
        self._server: asyncio.Server | None = None
        self.port = 0

    @classmethod
    async def open(cls, preferred_port: int | None = None) -> LoopbackCallback:
        """Listen on ``preferred_port`` when it is free, else on a random port."""
        callback = cls()
        server = None
        if preferred_port:
            with contextlib.suppress(OSError):
                server = await asyncio.start_server(callback._handle, "127.0.0.1",
                                                    preferred_port)
        if server is None:
            server = await asyncio.start_server(callback._handle, "127.0.0.1", 0)
        callback._server = server
        callback.port = server.sockets[0].getsockname()[1]
        return callback

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def wait(self) -> AuthorizationCodeResult:
        """The code (and state) the browser brought back; raises CallbackRefused."""
        return await asyncio.shield(self._result)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        if not self._result.done():
            self._result.cancel()
        elif not self._result.cancelled():
            self._result.exception()  # retrieved: a refusal nobody waited for is not an error

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(READ_TIMEOUT_S):
                head = await reader.readuntil(b"\r\n\r\n")
            status, page = self._answer(head)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError,
                ConnectionError):
            status, page = 400, "Bad request."
        body = (f"<!doctype html><meta charset=utf-8><title>Tebiki</title>"
                f"<p>{html.escape(page)}</p>").encode()
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
        with contextlib.suppress(ConnectionError):
            writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8"
                         f"\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
                         .encode() + body)
            await writer.drain()
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()

    def _answer(self, head: bytes) -> tuple[int, str]:
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != "GET" or len(head) > MAX_REQUEST_HEAD:
            return 400, "Bad request."
        target = urlsplit(parts[1])
        if target.path != CALLBACK_PATH:
            return 404, "Not found."
        query = {k: v[0] for k, v in parse_qs(target.query).items()}
        if self._result.done():
            return 200, "This sign-in has already been handled. You can close this tab."
        if "error" in query:
            why = query["error"] + (f": {query['error_description']}"
                                    if query.get("error_description") else "")
            self._result.set_exception(CallbackRefused(why))
            return 200, f"Sign-in was refused ({why}). You can close this tab."
        if not query.get("code"):
            return 400, "The sign-in callback carried no code."
        self._result.set_result(AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")))
        return 200, "Signed in to the MCP server. You can close this tab and return to Tebiki."
