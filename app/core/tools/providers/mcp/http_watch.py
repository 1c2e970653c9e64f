"""What happened on the wire to an HTTP MCP server's requests: whether a call reached it, and
the HTTP status a failed start got (401 → the server needs sign-in).

Why at the HTTP layer: the SDK turns a refused connection into "Connection closed" and a 404 on
an expired session into a JSON-RPC error, and a call that died half-way looks the same from
above. Only the transport knows whether the request ever got to the server, which decides if
retrying it after a reconnect is safe (a call that reached the server may have had effects).

How a call is tied to its requests: the SDK's streamable-HTTP client posts each request from a
task started in the *sender's* context (``ContextSendStream``), so a context variable set around
``call_tool`` is visible to the transport handling that call's POST.

Why "abandoned" is not "delivered": when one POST fails after reaching the server, the SDK's
transport ends and cancels every other POST in flight, including ones still connecting. Those
never sent a byte (httpcore's ``trace`` says when the request headers start going out), so
their calls are safe to retry; a POST cancelled or failed after that point may have run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

# HTTP statuses that mean the request was refused before anything ran.
SESSION_EXPIRED = 404  # the server does not know our session (it restarted, or expired it)
UNAUTHORIZED = 401


@dataclass
class CallOutcome:
    """The POSTs made for one call: refused (never reached the server), expired (404: the
    server no longer knows the session, so it ran nothing), abandoned (failed or cancelled
    before a byte of it was sent) or delivered (anything else)."""

    refused: int = 0
    expired: int = 0
    delivered: int = 0
    abandoned: int = 0

    @property
    def never_reached(self) -> bool:
        """Whether the call surely did not run: refused, expired or abandoned, and nothing got
        through."""
        return (self.refused or self.expired or self.abandoned) > 0 and self.delivered == 0

    @property
    def nothing_sent(self) -> bool:
        """No POST at all: a call that failed this way on a running HTTP session found the
        transport already dead (it broke an instant earlier), so it did not run either."""
        return self.refused == self.expired == self.delivered == self.abandoned == 0


_CURRENT: ContextVar[CallOutcome | None] = ContextVar("tebiki_mcp_call_outcome", default=None)


@contextlib.contextmanager
def watch_call() -> Iterator[CallOutcome]:
    """Record what happens to the HTTP requests made inside this block (and tasks it starts)."""
    outcome = CallOutcome()
    token = _CURRENT.set(outcome)
    try:
        yield outcome
    finally:
        _CURRENT.reset(token)


def recording_transport(httpx: Any, on_status: Callable[[int], None]) -> Any:
    """An httpx transport that records each POST's fate in the current ``CallOutcome`` and
    reports every response status to ``on_status`` (for the startup failure message)."""
    return _transport_class(httpx)(httpx.AsyncHTTPTransport(), on_status)


_CLASSES: dict[int, type] = {}


class _Sending:
    """Set once the request's headers start going out on a connection."""

    started = False


def _watch_sending(request: Any) -> _Sending:
    """Hook httpcore's ``trace`` extension (keeping any trace already set) to learn whether
    the request began to be sent; a new or reused connection reports it alike."""
    sending = _Sending()
    chained = request.extensions.get("trace")

    async def trace(event: str, info: dict[str, Any]) -> None:
        if event.endswith("send_request_headers.started"):
            sending.started = True
        if chained is not None:
            await chained(event, info)

    request.extensions = {**request.extensions, "trace": trace}
    return sending


def _transport_class(httpx: Any) -> type:
    """Built on first use: httpx is imported lazily with the SDK (see ``mcp.transport``)."""
    found = _CLASSES.get(id(httpx))
    if found is not None:
        return found
    connect_errors = (httpx.ConnectError, httpx.ConnectTimeout)

    class RecordingTransport(httpx.AsyncBaseTransport):  # type: ignore[misc]
        def __init__(self, inner: Any, on_status: Callable[[int], None]) -> None:
            self._inner = inner
            self._on_status = on_status

        async def handle_async_request(self, request: Any) -> Any:
            outcome = _CURRENT.get() if request.method == "POST" else None
            sending = _watch_sending(request) if outcome is not None else None
            try:
                response = await self._inner.handle_async_request(request)
            except connect_errors:
                if outcome is not None:
                    outcome.refused += 1
                raise
            except BaseException:
                if outcome is not None:
                    if sending is not None and not sending.started:
                        outcome.abandoned += 1  # not a byte went out: it cannot have run
                    else:
                        outcome.delivered += 1  # it may have been sent: never retried
                raise
            if outcome is not None:
                if response.status_code == SESSION_EXPIRED:
                    outcome.expired += 1
                else:
                    outcome.delivered += 1
            try:
                self._on_status(response.status_code)
            except Exception:
                pass
            return response

        async def aclose(self) -> None:
            await self._inner.aclose()

    _CLASSES[id(httpx)] = RecordingTransport
    return RecordingTransport
