"""Stream events of the wrong shape are the server's fault: a ProviderError the run reports
(and can retry), never an exception that surfaces as an internal error.

The scripted fake server only sends well-formed events, so these tests serve raw SSE bodies
from a tiny loopback HTTP server of their own.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from app.core.agent.models import MalformedStream, ModelRequest, ProviderError
from app.core.agent.models.anthropic import AnthropicProvider
from app.core.agent.models.openai_compat import OpenAICompatibleProvider


class RawSSEServer:
    def __init__(self) -> None:
        self.body = b""
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(server.body)))
                self.end_headers()
                self.wfile.write(server.body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def events(self, *events: tuple[str | None, object]) -> None:
        out = []
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data)
            out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
        self.body = "".join(out).encode("utf-8")


@pytest.fixture
def raw_server() -> Iterator[RawSSEServer]:
    server = RawSSEServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()
    server.thread.join(timeout=5)


REQUEST = ModelRequest(model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=100)
START = ("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 1}}})
STOP = ("message_stop", {"type": "message_stop"})

BAD_ANTHROPIC_EVENTS = [
    ("content_block_start", {"type": "content_block_start", "index": [0],
                             "content_block": {"type": "text", "text": ""}}),
    ("content_block_start", {"type": "content_block_start", "index": "0",
                             "content_block": {"type": "text", "text": ""}}),
    ("content_block_start", {"type": "content_block_start", "index": 0,
                             "content_block": {"type": "tool_use", "id": 5, "name": "x"}}),
    ("content_block_start", {"type": "content_block_start",
                             "content_block": {"type": "text"}}),
    ("content_block_start", {"type": "content_block_start", "index": 0,
                             "content_block": ["text"]}),
    ("message_delta", {"type": "message_delta", "usage": {"output_tokens": "many"}}),
    ("message_start", {"type": "message_start", "message": "started"}),
]


@pytest.mark.parametrize("bad", BAD_ANTHROPIC_EVENTS,
                         ids=[f"event{i}" for i in range(len(BAD_ANTHROPIC_EVENTS))])
async def test_anthropic_malformed_event_is_a_provider_error(raw_server: RawSSEServer,
                                                             bad: tuple[str, object]) -> None:
    raw_server.events(START, bad, STOP)
    provider = AnthropicProvider(api_key="sk-test", base_url=raw_server.base_url, max_retries=0)
    try:
        with pytest.raises(ProviderError) as info:
            await provider.stream(REQUEST, lambda _text: None)
    finally:
        await provider.aclose()
    assert type(info.value) is MalformedStream and "malformed" in info.value.message
    assert info.value.retryable


async def test_anthropic_malformed_delta_is_a_provider_error(raw_server: RawSSEServer) -> None:
    raw_server.events(
        START,
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "tool_use", "id": "t", "name": "x"}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "input_json_delta", "partial_json": 7}}),
        STOP)
    provider = AnthropicProvider(api_key="sk-test", base_url=raw_server.base_url, max_retries=0)
    try:
        with pytest.raises(ProviderError, match="malformed"):
            await provider.stream(REQUEST, lambda _text: None)
    finally:
        await provider.aclose()


def _chunk(delta: object, finish: str | None = None) -> dict[str, object]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


BAD_OPENAI_CHUNKS: list[object] = [
    _chunk({"tool_calls": [{"index": "first", "function": {"name": "x"}}]}),
    _chunk({"tool_calls": ["not an object"]}),
    _chunk({"content": ["a", "b"]}),
    {"choices": ["not an object"]},
    {"choices": [], "usage": {"prompt_tokens": "lots"}},
]


@pytest.mark.parametrize("bad", BAD_OPENAI_CHUNKS,
                         ids=[f"chunk{i}" for i in range(len(BAD_OPENAI_CHUNKS))])
async def test_openai_malformed_chunk_is_a_provider_error(raw_server: RawSSEServer,
                                                          bad: object) -> None:
    raw_server.events((None, bad), (None, _chunk({}, "stop")), (None, "[DONE]"))
    provider = OpenAICompatibleProvider(base_url=raw_server.base_url, max_retries=0)
    try:
        with pytest.raises(ProviderError) as info:
            await provider.stream(REQUEST, lambda _text: None)
    finally:
        await provider.aclose()
    assert type(info.value) is MalformedStream and "malformed" in info.value.message
    assert info.value.retryable


async def test_openai_arguments_sent_as_an_object_still_parse(raw_server: RawSSEServer) -> None:
    raw_server.events(
        (None, _chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {
            "name": "record", "arguments": {"value": "a"}}}]})),
        (None, _chunk({}, "tool_calls")), (None, "[DONE]"))
    provider = OpenAICompatibleProvider(base_url=raw_server.base_url, max_retries=0)
    try:
        turn = await provider.stream(REQUEST, lambda _text: None)
    finally:
        await provider.aclose()
    (call,) = turn.tool_calls
    assert (call.name, call.input, call.error) == ("record", {"value": "a"}, None)


async def test_openai_huge_integer_argument_is_a_tool_error(raw_server: RawSSEServer) -> None:
    raw_server.events(
        (None, _chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {
            "name": "record", "arguments": '{"value": ' + "1" * 5000 + "}"}}]})),
        (None, _chunk({}, "tool_calls")), (None, "[DONE]"))
    provider = OpenAICompatibleProvider(base_url=raw_server.base_url, max_retries=0)
    try:
        turn = await provider.stream(REQUEST, lambda _text: None)
    finally:
        await provider.aclose()
    (call,) = turn.tool_calls
    assert call.error is not None and "digits" in call.error
    assert turn.content[0]["input"] == {}
