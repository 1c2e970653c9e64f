"""What a server sends is read within bounds: an endless stream line or an oversized model
list ends in a clear MalformedStream instead of being buffered until memory runs out. Against
real loopback HTTP servers; the bounds are lowered so the tests stay fast."""

from __future__ import annotations

import http.server
import threading
from collections.abc import AsyncIterator, Iterator

import pytest

from app.core.agent import sse
from app.core.agent.models import MalformedStream, ModelRequest, ProviderServerError, http_retry
from app.core.agent.models.anthropic import AnthropicProvider
from app.core.agent.models.openai_compat import OpenAICompatibleProvider


async def _chunks(*parts: str) -> AsyncIterator[str]:
    for part in parts:
        yield part


async def _lines(*parts: str, limit: int | None = None) -> list[str]:
    return [line async for line in sse.bounded_lines(_chunks(*parts), "API", limit)]


async def test_lines_end_at_lf_crlf_or_cr_even_when_split_across_chunks() -> None:
    assert await _lines("a\nb\r\nc\rd") == ["a", "b", "c", "d"]
    assert await _lines("a\r", "\nb\r", "c") == ["a", "b", "c"]  # \r\n split, then a lone \r
    assert await _lines("da", "ta: x", "", "y\n\n") == ["data: xy", ""]
    assert await _lines("\r", "\n") == [""]


async def test_a_line_over_the_bound_is_refused_while_it_arrives() -> None:
    with pytest.raises(MalformedStream, match="longer than 10 characters"):
        await _lines("short\n", *(["x"] * 11), "\n", limit=10)
    with pytest.raises(MalformedStream):
        await _lines("y" * 11 + "\n", limit=10)
    assert await _lines("z" * 10 + "\n", limit=10) == ["z" * 10]


class _Server:
    """A loopback HTTP server answering every request with ``status`` and ``body_chunks``
    (written one after the other until the client goes away)."""

    def __init__(self, status: int, content_type: str, body_chunks: Iterator[bytes]) -> None:
        chunks = body_chunks

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for chunk in chunks:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client stopped reading: what the test wants
                    pass

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _endless(head: bytes, piece: bytes, limit: int = 200_000) -> Iterator[bytes]:
    yield head
    for _ in range(limit):  # far past any bound the client keeps; it hangs up long before
        yield piece


def _request() -> ModelRequest:
    return ModelRequest(model="m", max_tokens=16, messages=[{"role": "user", "content": "hi"}])


@pytest.fixture
def small_line_bound(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(sse, "MAX_LINE_CHARS", 64 * 1024)
    return 64 * 1024


@pytest.mark.parametrize("provider_kind", ["anthropic", "openai_compatible"])
async def test_an_endless_stream_line_ends_the_turn_with_a_clear_error(
        provider_kind: str, small_line_bound: int) -> None:
    server = _Server(200, "text/event-stream",
                     _endless(b"event: message_start\ndata: {\"x\": \"", b"x" * 4096))
    provider = (AnthropicProvider(api_key="k", base_url=server.url, max_retries=0)
                if provider_kind == "anthropic" else
                OpenAICompatibleProvider(base_url=server.url, max_retries=0))
    try:
        with pytest.raises(MalformedStream, match="stream line longer than 65,536 characters"):
            await provider.stream(_request(), lambda _t: None)
    finally:
        await provider.aclose()
        server.close()


async def test_an_oversized_model_list_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_retry, "MAX_JSON_BODY", 100_000)
    server = _Server(200, "application/json", _endless(b'{"data": [', b'{"id": "m"},' * 100))
    provider = AnthropicProvider(api_key="k", base_url=server.url, max_retries=0)
    try:
        with pytest.raises(MalformedStream, match="over 100,000 bytes"):
            await provider.list_models()
    finally:
        await provider.aclose()
        server.close()


async def test_an_error_page_that_is_not_json_is_reported_with_its_text() -> None:
    server = _Server(502, "text/html", iter([b"<html>Bad gateway</html>"]))
    provider = AnthropicProvider(api_key="k", base_url=server.url, max_retries=0)
    try:
        with pytest.raises(ProviderServerError, match="Bad gateway"):
            await provider.stream(_request(), lambda _t: None)
    finally:
        await provider.aclose()
        server.close()
