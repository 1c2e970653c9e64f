"""Sending a model request with the retry policy both providers share.

One rule set, the one the Anthropic SDK applies, so a failure reads and behaves the same
whichever provider a profile uses:

- a response's ``x-should-retry: true/false`` header decides when present (the API sets it);
  otherwise 408, 409, 429 and every 5xx (529 included) are retried;
- a transport failure before the response's status line (refused, reset, connect timeout, a
  stale keep-alive connection) is retried: nothing was shown, so resending is safe. A read
  timeout waiting for the status line is not: the server had the full timeout (minutes) and
  asking again would only multiply the wait;
- the wait is what ``retry-after-ms`` / ``retry-after`` ask for when that is at most a minute,
  else exponential backoff from ``BACKOFF_BASE_S`` (capped at ``BACKOFF_MAX_S``) with jitter;
- a redirect is refused, never followed (the key would go along to the address it names);
- once a response with a status below 300 is returned the caller owns its body: a stream that
  breaks after that is never replayed (text was already shown).

``open_response`` is the one entry point; it returns the response with its body unread, or
raises the ProviderError the last failure maps to.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from app.core.agent.models.base import (
    MalformedStream,
    ProviderBadRequest,
    connection_error,
    error_from_body,
)
from app.core.agent.models.stream_notices import tell_waiting

log = logging.getLogger(__name__)

# The values are the SDK's. Tests replace ``sleep`` to see the waits without waiting.
BACKOFF_BASE_S = 0.5
BACKOFF_MAX_S = 8.0
# A longer server-requested wait is not honoured as such (backoff instead): a desktop request
# should fail visibly rather than hang for minutes.
MAX_RETRY_AFTER_S = 60.0
_RETRY_STATUSES = frozenset({408, 409, 429})
MAX_ERROR_BODY = 64 * 1024
# A model list is tens of KB; a body far larger is not one (a wrong base URL, say).
MAX_JSON_BODY = 16 * 1024 * 1024

Sleep = Callable[[float], Awaitable[Any]]
sleep: Sleep = asyncio.sleep


def keepalive_transport() -> httpx.AsyncHTTPTransport:
    """A transport with TCP keep-alive probes, as the SDK sets them: a stream that waits
    minutes for a thinking model is not dropped by an idle NAT, and a dead peer is noticed."""
    options: list[tuple[int, int, int]] = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
    for name, value in (("TCP_KEEPINTVL", 60), ("TCP_KEEPCNT", 5), ("TCP_KEEPIDLE", 60)):
        opt = getattr(socket, name, None)
        if opt is not None:
            options.append((socket.IPPROTO_TCP, opt, value))
    return httpx.AsyncHTTPTransport(socket_options=options)


def should_retry(response: httpx.Response) -> bool:
    """Whether an error response is worth sending the request again for."""
    header = response.headers.get("x-should-retry")
    if header == "true":
        return True
    if header == "false":
        return False
    return response.status_code in _RETRY_STATUSES or response.status_code >= 500


def retry_after(headers: httpx.Headers | None) -> float | None:
    """The wait the server asked for in seconds (``retry-after-ms``, then ``retry-after`` as
    seconds or an HTTP date), or None."""
    if headers is None:
        return None
    try:
        return float(headers.get("retry-after-ms", "")) / 1000
    except ValueError:
        pass
    value = headers.get("retry-after", "")
    try:
        return float(value)
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(value) if value else None
    if parsed is None:
        return None
    return email.utils.mktime_tz(parsed) - time.time()


def retry_delay(attempt: int, headers: httpx.Headers | None = None) -> float:
    """Seconds to wait before retry number ``attempt + 1`` (``attempt`` counts from 0)."""
    asked = retry_after(headers)
    if asked is not None and 0 < asked <= MAX_RETRY_AFTER_S:
        return asked
    backoff = min(BACKOFF_BASE_S * 2.0 ** min(attempt, 32), BACKOFF_MAX_S)
    return backoff * (1 - 0.25 * random.random())


async def _error_body(response: httpx.Response) -> Any:
    """An error response's body as JSON or text, read up to MAX_ERROR_BODY bytes (an error
    page from a proxy can be large; the message shown is cut to 500 characters anyway)."""
    raw = b""
    async for chunk in response.aiter_bytes():
        raw += chunk
        if len(raw) >= MAX_ERROR_BODY:
            break
    raw = raw[:MAX_ERROR_BODY]
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", errors="replace")


def _redirect_refused(response: httpx.Response, label: str) -> ProviderBadRequest:
    # Redirects are not followed: the API never sends one, and a client following it would
    # carry the key (in a header no HTTP client strips) to whatever address the server names.
    where = response.headers.get("location", "")[:200] or "another address"
    return ProviderBadRequest(
        f"{label} answered with a redirect ({response.status_code}) to {where}. Tebiki does "
        "not follow redirects, so the API key never goes to an address you did not set; if "
        "that is the right address, set it as the base URL in Settings → Provider.",
        response.status_code)


async def open_response(client: httpx.AsyncClient, request: httpx.Request, *,
                        max_retries: int, label: str) -> httpx.Response:
    """Send ``request`` (retrying per the module's rules); the response when its status is
    below 300, its body unread (the caller must close it).

    Raises the ProviderError for the last error status (from its body) or, for a transport
    failure before any response, a ProviderConnectionError. ``request`` must have a replayable
    body (bytes), which every ``client.build_request(content=/json=)`` gives."""
    retries = max(0, int(max_retries))
    attempt = 0
    while True:
        try:
            response = await client.send(request, stream=True)
        except httpx.TransportError as exc:
            if attempt >= retries or isinstance(exc, httpx.ReadTimeout):
                raise connection_error(label, exc) from None
            delay = retry_delay(attempt)
            log.info("%s: %s, retrying in %.2f s", label, type(exc).__name__, delay)
        except httpx.RequestError as exc:  # too many redirects: resending cannot help
            raise connection_error(label, exc) from None
        else:
            if 300 <= response.status_code < 400:
                await response.aclose()
                raise _redirect_refused(response, label)
            if response.status_code < 400:
                return response
            body: Any = ""
            try:
                body = await _error_body(response)
            except httpx.RequestError:
                pass  # the status says enough; the body only adds the API's message
            finally:
                await response.aclose()
            if attempt >= retries or not should_retry(response):
                raise error_from_body(response.status_code, body, label)
            delay = retry_delay(attempt, response.headers)
            log.info("%s: status %d, retrying in %.2f s", label, response.status_code, delay)
            tell_waiting(delay, "rate limited" if response.status_code == 429 else
                          f"the service answered {response.status_code}")
        attempt += 1
        await sleep(delay)



async def get_json(client: httpx.AsyncClient, request: httpx.Request, *, max_retries: int,
                   label: str, max_bytes: int | None = None) -> Any:
    """``request``'s answer as JSON (None when it is not JSON), sent as ``open_response``
    does, its body read up to ``max_bytes`` (``MAX_JSON_BODY``): a longer one is refused
    (MalformedStream), never read whole into memory."""
    limit = MAX_JSON_BODY if max_bytes is None else max_bytes
    response = await open_response(client, request, max_retries=max_retries, label=label)
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise MalformedStream(f"{label} sent an answer over {limit:,} bytes, far "
                                      "more than the request asks for; check the base URL.")
            parts.append(chunk)
    except httpx.RequestError as exc:
        raise connection_error(label, exc) from None
    finally:
        await response.aclose()
    try:
        return json.loads(b"".join(parts))
    except ValueError:
        return None
