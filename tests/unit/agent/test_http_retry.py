"""The retry policy both providers share (app.core.agent.models.http_retry): which answers
are retried, how long to wait, and the OpenAI-compatible provider going through it."""

from __future__ import annotations

import email.utils
import time

import httpx
import pytest

from app.core.agent.models import (
    ModelRequest,
    ProviderBadRequest,
    ProviderConnectionError,
    ProviderServerError,
    http_retry,
)
from app.core.agent.models.openai_compat import OpenAICompatibleProvider
from tests.fakes.anthropic_server import FakeAnthropicServer, Response


def _response(status: int, **headers: str) -> httpx.Response:
    return httpx.Response(status, headers=headers)


@pytest.mark.parametrize(("status", "headers", "expected"), [
    (408, {}, True), (409, {}, True), (429, {}, True), (500, {}, True), (503, {}, True),
    (529, {}, True), (400, {}, False), (401, {}, False), (404, {}, False), (413, {}, False),
    (500, {"x-should-retry": "false"}, False), (429, {"x-should-retry": "false"}, False),
    (400, {"x-should-retry": "true"}, True),
])
def test_which_statuses_are_retried(status: int, headers: dict[str, str],
                                    expected: bool) -> None:
    assert http_retry.should_retry(_response(status, **headers)) is expected


def test_the_wait_is_what_the_server_asks_for_up_to_a_minute() -> None:
    assert http_retry.retry_delay(0, httpx.Headers({"retry-after-ms": "1500"})) == 1.5
    assert http_retry.retry_delay(3, httpx.Headers({"retry-after": "2"})) == 2.0
    # retry-after-ms wins over retry-after
    assert http_retry.retry_delay(0, httpx.Headers({"retry-after-ms": "10",
                                                    "retry-after": "5"})) == 0.01
    in_20_s = email.utils.formatdate(time.time() + 20, usegmt=True)
    assert 15 < http_retry.retry_delay(0, httpx.Headers({"retry-after": in_20_s})) <= 20


@pytest.mark.parametrize("headers", [{}, {"retry-after": "3600"}, {"retry-after": "0"},
                                     {"retry-after": "-1"}, {"retry-after": "soon"},
                                     {"retry-after-ms": "nan-ish"}])
def test_without_a_usable_wait_it_backs_off_exponentially_with_jitter(
        headers: dict[str, str]) -> None:
    for attempt, (low, high) in enumerate([(0.375, 0.5), (0.75, 1.0), (1.5, 2.0), (3.0, 4.0),
                                           (6.0, 8.0), (6.0, 8.0)]):
        delay = http_retry.retry_delay(attempt, httpx.Headers(headers))
        assert low <= delay <= high, (attempt, delay)
    assert http_retry.retry_delay(10_000) <= http_retry.BACKOFF_MAX_S


# -- the OpenAI-compatible provider uses the same rules -----------------------------------


def _request() -> ModelRequest:
    return ModelRequest(model="llama3.2", max_tokens=64,
                        messages=[{"role": "user", "content": "hi"}])


async def test_openai_compatible_retries_and_obeys_x_should_retry(
        fake_anthropic: FakeAnthropicServer, waits: list[float]) -> None:
    client = OpenAICompatibleProvider(base_url=fake_anthropic.base_url, max_retries=2)
    try:
        fake_anthropic.script(Response.error(429, retry_after_ms=40), Response.text("Hi."))
        turn = await client.stream(_request(), lambda _t: None)
        assert turn.content == [{"type": "text", "text": "Hi."}]
        assert waits == [0.04]

        fake_anthropic.script(Response.error(503, headers={"x-should-retry": "false"}),
                              Response.text("never reached"))
        with pytest.raises(ProviderServerError):
            await client.stream(_request(), lambda _t: None)
        assert waits == [0.04] and fake_anthropic.pending == 1
        fake_anthropic.clear()

        fake_anthropic.script(Response.error(400), Response.text("never reached"))
        with pytest.raises(ProviderBadRequest):
            await client.stream(_request(), lambda _t: None)
        assert len(fake_anthropic.message_requests) == 1
    finally:
        await client.aclose()


async def test_openai_compatible_retries_a_refused_connection(waits: list[float]) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = OpenAICompatibleProvider(base_url=f"http://127.0.0.1:{port}", max_retries=1)
    try:
        with pytest.raises(ProviderConnectionError, match="failed"):
            await client.stream(_request(), lambda _t: None)
        assert len(waits) == 1
    finally:
        await client.aclose()
