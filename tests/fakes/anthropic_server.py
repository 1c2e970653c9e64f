"""A real HTTP server on 127.0.0.1 that speaks the Anthropic Messages API, scripted per test.

The official SDK talks to it exactly as it talks to api.anthropic.com: ``POST /v1/messages``
answers with Server-Sent Events in the API's order (message_start, content_block_start,
content_block_delta with text_delta / input_json_delta, content_block_stop, message_delta with
stop_reason and usage, message_stop, pings), or with an Anthropic error JSON body and status.
``GET /v1/models`` lists models. ``POST /v1/chat/completions`` renders the same script in the
OpenAI streaming format, so the OpenAI-compatible provider is tested against the same double.

Usage::

    server.script(Response.tool_use("read_file", {"path": "a.txt"}), Response.text("Done."))
    ...  # run the code under test with server.base_url
    assert server.requests[1].body["messages"][-1]["content"][0]["type"] == "tool_result"

Each model request takes the next scripted response; when the script runs out the server answers
500 with a message naming the problem (and counts it in ``unscripted``), so a test that makes an
unexpected call fails loudly. Set ``api_key`` to make it refuse any other key with 401.

Faults: ``Response.error(status)`` (the API's error types and bodies, plus ``retry-after-ms`` so
SDK retries are fast), ``drop_after`` (close the socket mid-stream), ``error_after`` (an
``event: error`` mid-stream, as the API sends on overload), ``chunk_delay_s`` (slow stream) and
``delay_s`` (slow first byte). ``disconnects`` counts clients that went away mid-stream, which is
how tests see that Stop really closed the connection. ``fake_anthropic`` is the fixture;
``fake_anthropic_env`` also points ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY at it, and
``isolated_keyring`` swaps the OS keyring for an in-memory one.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest

ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "api_error",
    529: "overloaded_error",
}
ERROR_MESSAGES: dict[str, str] = {
    "invalid_request_error": "There was an issue with the format or content of your request.",
    "authentication_error": "invalid x-api-key",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "The requested resource could not be found.",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit",
    "api_error": "Internal server error",
    "overloaded_error": "Overloaded",
}
DEFAULT_MODELS: tuple[str, ...] = ("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5")

_ids = itertools.count(1)


def _model_entry(model: str | dict[str, Any]) -> dict[str, Any]:
    """One ``/v1/models`` entry: the API's fields, with ``model``'s own (a dict) on top."""
    fields = {"id": model} if isinstance(model, str) else dict(model)
    model_id = str(fields["id"])
    return {"type": "model", "object": "model", "id": model_id,
            "display_name": model_id.replace("-", " ").title(),
            "created_at": "2025-01-01T00:00:00Z", "lifecycle": "active",
            "owned_by": "fake", **fields}


def _new_id(prefix: str) -> str:
    return f"{prefix}_fake{next(_ids):08d}"


# -- the script ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """A text block, streamed as one text_delta per ``chunk_chars`` characters (0: per word)."""

    text: str
    chunk_chars: int = 0

    def chunks(self) -> list[str]:
        if not self.text:
            return []
        if self.chunk_chars > 0:
            n = self.chunk_chars
            return [self.text[i:i + n] for i in range(0, len(self.text), n)]
        parts, start = [], 0
        for i, ch in enumerate(self.text):
            if ch == " " and i > start:
                parts.append(self.text[start:i])
                start = i
        parts.append(self.text[start:])
        return parts


@dataclass(frozen=True)
class ToolUse:
    """A tool_use block; its input is streamed as input_json_delta pieces of ``json_chunk`` chars.

    ``raw_json`` sends exactly that text instead of ``input`` (malformed input for tests).
    """

    name: str
    input: Any = field(default_factory=dict)
    id: str = ""
    raw_json: str | None = None
    json_chunk: int = 16

    def json_text(self) -> str:
        if self.raw_json is not None:
            return self.raw_json
        return json.dumps(self.input, ensure_ascii=False)

    def json_chunks(self) -> list[str]:
        text = self.json_text()
        n = max(1, self.json_chunk)
        return [text[i:i + n] for i in range(0, len(text), n)]


Block = Text | ToolUse


def tool(name: str, input: Any = None, *, id: str = "", raw_json: str | None = None) -> ToolUse:
    """Shorthand for a ToolUse block (``input`` None means ``{}``)."""
    return ToolUse(name, {} if input is None else input, id, raw_json)


@dataclass(frozen=True)
class Response:
    """One scripted answer to a model request."""

    blocks: tuple[Block, ...] = ()
    stop_reason: str | None = None   # None: "tool_use" when a tool block is present, else end_turn
    status: int = 200
    error_type: str | None = None
    error_message: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0             # before the status line
    chunk_delay_s: float = 0.0       # between SSE events
    drop_after: int | None = None    # close the socket after this many SSE events
    error_after: int | None = None   # send `event: error` (overloaded) after this many events
    ping: bool = True                # a ping after the first content_block_start, as the API does
    input_tokens: int = 12
    model: str = "claude-sonnet-4-5"

    # -- constructors ----------------------------------------------------------------------

    @classmethod
    def text(cls, text: str, *, stop_reason: str = "end_turn", chunk_chars: int = 0,
             **options: Any) -> Response:
        return cls((Text(text, chunk_chars),), stop_reason=stop_reason, **options)

    @classmethod
    def tool_use(cls, name: str, input: Any = None, *, id: str = "", text: str | None = None,
                 **options: Any) -> Response:
        """A turn that calls one tool (optionally after some text)."""
        blocks: list[Block] = [Text(text)] if text else []
        blocks.append(tool(name, input, id=id))
        return cls(tuple(blocks), **options)

    @classmethod
    def tools(cls, *calls: ToolUse | tuple[str, Any], text: str | None = None,
              **options: Any) -> Response:
        """A turn that calls several tools in order: ``Response.tools(tool("a", {...}), ...)``."""
        blocks: list[Block] = [Text(text)] if text else []
        for call in calls:
            blocks.append(call if isinstance(call, ToolUse) else tool(*call))
        return cls(tuple(blocks), **options)

    @classmethod
    def of(cls, *blocks: Block, **options: Any) -> Response:
        return cls(tuple(blocks), **options)

    @classmethod
    def error(cls, status: int, error_type: str | None = None, message: str | None = None, *,
              retry_after_ms: int | None = 1, headers: dict[str, str] | None = None,
              **options: Any) -> Response:
        """An HTTP error with the API's JSON body; ``retry-after-ms`` keeps SDK retries fast."""
        extra = dict(headers or {})
        if retry_after_ms is not None:
            extra.setdefault("retry-after-ms", str(retry_after_ms))
        return cls(status=status, error_type=error_type or ERROR_TYPES.get(status, "api_error"),
                   error_message=message, headers=tuple(extra.items()), **options)

    def with_options(self, **changes: Any) -> Response:
        return replace(self, **changes)

    # -- derived ---------------------------------------------------------------------------

    @property
    def final_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if any(isinstance(b, ToolUse) for b in self.blocks) else "end_turn"

    def error_body(self) -> dict[str, Any]:
        etype = self.error_type or "api_error"
        return {"type": "error",
                "error": {"type": etype,
                          "message": self.error_message or ERROR_MESSAGES.get(etype, "Error")},
                "request_id": _new_id("req")}

    def output_tokens(self) -> int:
        n = 0
        for block in self.blocks:
            n += len(block.chunks()) if isinstance(block, Text) else len(block.json_chunks()) + 1
        return max(1, n)

    def message(self, msg_id: str) -> dict[str, Any]:
        """The whole message as the non-streaming API returns it."""
        content: list[dict[str, Any]] = []
        for block in self.blocks:
            if isinstance(block, Text):
                content.append({"type": "text", "text": block.text})
            else:
                content.append({"type": "tool_use", "id": block.id or _new_id("toolu"),
                                "name": block.name, "input": json.loads(block.json_text())})
        return {"id": msg_id, "type": "message", "role": "assistant", "model": self.model,
                "content": content, "stop_reason": self.final_stop_reason,
                "stop_sequence": None,
                "usage": {"input_tokens": self.input_tokens,
                          "output_tokens": self.output_tokens()}}

    def sse_events(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(event name, data) pairs in the order the Messages API sends them."""
        msg_id = _new_id("msg")
        yield "message_start", {
            "type": "message_start",
            "message": {"id": msg_id, "type": "message", "role": "assistant",
                        "model": self.model, "content": [], "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {"input_tokens": self.input_tokens, "output_tokens": 1}}}
        for index, block in enumerate(self.blocks):
            if isinstance(block, Text):
                yield "content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": {"type": "text", "text": ""}}
                if index == 0 and self.ping:
                    yield "ping", {"type": "ping"}
                for piece in block.chunks():
                    yield "content_block_delta", {
                        "type": "content_block_delta", "index": index,
                        "delta": {"type": "text_delta", "text": piece}}
            else:
                yield "content_block_start", {
                    "type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": block.id or _new_id("toolu"),
                                      "name": block.name, "input": {}}}
                if index == 0 and self.ping:
                    yield "ping", {"type": "ping"}
                yield "content_block_delta", {
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": ""}}
                for piece in block.json_chunks():
                    yield "content_block_delta", {
                        "type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece}}
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield "message_delta", {
            "type": "message_delta",
            "delta": {"stop_reason": self.final_stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": self.output_tokens()}}
        yield "message_stop", {"type": "message_stop"}

    def openai_chunks(self) -> Iterator[dict[str, Any]]:
        """The same turn as OpenAI chat.completion.chunk objects."""
        cid = _new_id("chatcmpl")
        base = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
                "model": self.model}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        yield chunk({"role": "assistant", "content": ""})
        tool_index = 0
        for block in self.blocks:
            if isinstance(block, Text):
                for piece in block.chunks():
                    yield chunk({"content": piece})
            else:
                call_id = block.id or _new_id("call")
                pieces = block.json_chunks() or [""]
                yield chunk({"tool_calls": [{
                    "index": tool_index, "id": call_id, "type": "function",
                    "function": {"name": block.name, "arguments": pieces[0]}}]})
                for piece in pieces[1:]:
                    yield chunk({"tool_calls": [{"index": tool_index,
                                                 "function": {"arguments": piece}}]})
                tool_index += 1
        finish = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}.get(
            self.final_stop_reason, "stop")
        yield chunk({}, finish)
        yield {**base, "choices": [],
               "usage": {"prompt_tokens": self.input_tokens,
                         "completion_tokens": self.output_tokens(),
                         "total_tokens": self.input_tokens + self.output_tokens()}}


# -- the server ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]   # lower-cased names
    body: Any                 # parsed JSON, or None
    raw: bytes

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list((self.body or {}).get("messages", []))

    @property
    def tool_names(self) -> list[str]:
        tools = (self.body or {}).get("tools") or []
        return [t.get("name") or t.get("function", {}).get("name") for t in tools]

    def tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks of the last message (Anthropic format)."""
        if not self.messages:
            return []
        content = self.messages[-1].get("content")
        if not isinstance(content, list):
            return []
        return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


class FakeAnthropicServer:
    """See the module docstring. Thread-safe; start with ``with`` or the ``fake_anthropic``
    fixture."""

    def __init__(self) -> None:
        self._queue: deque[Response] = deque()
        self.requests: list[RecordedRequest] = []
        # An id, or a dict of /v1/models fields over the defaults (created_at, line,
        # lifecycle, retires_at), for tests that pick the newest model or warn about one.
        self.models: list[str | dict[str, Any]] = list(DEFAULT_MODELS)
        self.models_error: Response | None = None
        # When set, a request must carry this key (x-api-key or a Bearer token), else 401 —
        # as the API answers a wrong key. The 401 does not use up a scripted response.
        self.api_key: str | None = None
        self.unscripted = 0
        self.disconnects = 0
        self.completed_streams = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._cond = threading.Condition(self._lock)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True,
                                        name="fake-anthropic")

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeAnthropicServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()  # wakes slow handlers
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropicServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """What the SDK's ``base_url`` should be (it appends ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    # -- scripting -------------------------------------------------------------------------

    def script(self, *responses: Response) -> FakeAnthropicServer:
        """Queue responses; each model request takes the next one."""
        with self._lock:
            self._queue.extend(responses)
        return self

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    @property
    def pending(self) -> int:
        """Scripted responses not used yet."""
        with self._lock:
            return len(self._queue)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """Requests to /v1/messages or /v1/chat/completions, in order."""
        with self._lock:
            return [r for r in self.requests
                    if r.path in ("/v1/messages", "/v1/chat/completions")]

    @property
    def last_request(self) -> RecordedRequest:
        reqs = self.message_requests
        if not reqs:
            raise AssertionError("the fake Anthropic server received no model request")
        return reqs[-1]

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        """Block until ``count`` model requests arrived (for tests driving another thread)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len([r for r in self.requests if r.method == "POST"]) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    # -- internals -------------------------------------------------------------------------

    def _record(self, req: RecordedRequest) -> None:
        with self._cond:
            self.requests.append(req)
            self._cond.notify_all()

    def _next(self) -> Response | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            self.unscripted += 1
            return None

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def setup(self) -> None:
                super().setup()
                # Like a real API front end: without this, Nagle's algorithm and the client's
                # delayed ACK stall every small SSE write by ~40 ms.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            # -- plumbing --------------------------------------------------------------

            def _read(self) -> RecordedRequest:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                parts = urlsplit(self.path)
                req = RecordedRequest(self.command, parts.path, parts.query,
                                      {k.lower(): v for k, v in self.headers.items()}, body, raw)
                server._record(req)
                return req

            def _json(self, status: int, payload: Any,
                      headers: tuple[tuple[str, str], ...] = ()) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("request-id", _new_id("req"))
                for k, v in headers:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            def _authorised(self, req: RecordedRequest) -> bool:
                if server.api_key is None:
                    return True
                bearer = req.headers.get("authorization", "")
                given = req.headers.get("x-api-key") or bearer.removeprefix("Bearer ").strip()
                if given == server.api_key:
                    return True
                self._json(401, Response.error(401).error_body(),
                           (("x-should-retry", "false"),))
                return False

            def _wait(self, seconds: float) -> bool:
                """Sleep, but return False early when the server shuts down."""
                return not (seconds > 0 and server._stop.wait(seconds))

            # -- routes ----------------------------------------------------------------

            def do_GET(self) -> None:
                req = self._read()
                if not self._authorised(req):
                    return
                if req.path == "/v1/models":
                    if server.models_error is not None:
                        err = server.models_error
                        self._json(err.status, err.error_body(), err.headers)
                        return
                    data = [_model_entry(m) for m in server.models]
                    self._json(200, {"data": data, "has_more": False, "object": "list",
                                     "first_id": data[0]["id"] if data else None,
                                     "last_id": data[-1]["id"] if data else None})
                    return
                self._json(404, Response.error(404).error_body())

            def do_POST(self) -> None:
                req = self._read()
                if req.path not in ("/v1/messages", "/v1/chat/completions"):
                    self._json(404, Response.error(404).error_body())
                    return
                if not self._authorised(req):
                    return
                resp = server._next()
                if resp is None:
                    self._json(500, Response.error(
                        500, message="fake server: no scripted response left for this "
                                     "request").error_body(), (("x-should-retry", "false"),))
                    return
                if not self._wait(resp.delay_s):
                    return
                if resp.status != 200:
                    self._json(resp.status, resp.error_body(), resp.headers)
                    return
                openai = req.path == "/v1/chat/completions"
                stream = bool((req.body or {}).get("stream"))
                if not stream:
                    if openai:
                        self._json(500, {"error": {"message": "fake: only streaming"}})
                    else:
                        self._json(200, resp.message(_new_id("msg")), resp.headers)
                    return
                self._stream(resp, openai)

            def _stream(self, resp: Response, openai: bool) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("request-id", _new_id("req"))
                for k, v in resp.headers:
                    self.send_header(k, v)
                self.end_headers()
                if openai:
                    events: Iterator[bytes] = (
                        b"data: " + json.dumps(c).encode() + b"\n\n"
                        for c in resp.openai_chunks())
                    tail = [b"data: [DONE]\n\n"]
                else:
                    events = (f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                              for name, data in resp.sse_events())
                    tail = []
                try:
                    for n, event in enumerate(itertools.chain(events, tail)):
                        if resp.drop_after is not None and n >= resp.drop_after:
                            # Half a chunk, then a hard close: what a dying proxy does.
                            self.wfile.write(b"%x\r\n%s" % (len(event), event[:len(event) // 2]))
                            self.wfile.flush()
                            self.close_connection = True
                            return
                        if resp.error_after is not None and n >= resp.error_after:
                            err = Response.error(529).error_body()
                            err.pop("request_id")
                            self._chunk(f"event: error\ndata: {json.dumps(err)}\n\n".encode())
                            break
                        if n and resp.chunk_delay_s and not self._wait(resp.chunk_delay_s):
                            self.close_connection = True
                            return
                        self._chunk(event)
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                    with server._lock:
                        server.completed_streams += 1
                except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
                    with server._lock:
                        server.disconnects += 1
                    self.close_connection = True

        return Handler


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropicServer]:
    """A started fake Anthropic server for one test."""
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def fake_anthropic_env(fake_anthropic: FakeAnthropicServer,
                       monkeypatch: pytest.MonkeyPatch) -> FakeAnthropicServer:
    """The fake server, with ANTHROPIC_BASE_URL and a dummy ANTHROPIC_API_KEY pointing at it,
    so code that builds its own client (the app, the UI) talks to it."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-fake-key-0000")
    return fake_anthropic


class MemoryKeyring:
    """An in-memory keyring backend, so tests never read or write the real OS keyring."""

    def __init__(self) -> None:
        import keyring.backend

        class _Backend(keyring.backend.KeyringBackend):
            priority = 1  # type: ignore[assignment]

            def __init__(inner) -> None:
                super().__init__()
                inner.store: dict[tuple[str, str], str] = {}

            def get_password(inner, service: str, username: str) -> str | None:
                return inner.store.get((service, username))

            def set_password(inner, service: str, username: str, password: str) -> None:
                inner.store[(service, username)] = password

            def delete_password(inner, service: str, username: str) -> None:
                from keyring.errors import PasswordDeleteError

                if inner.store.pop((service, username), None) is None:
                    raise PasswordDeleteError(username)

        self.backend = _Backend()

    @property
    def store(self) -> dict[tuple[str, str], str]:
        return self.backend.store


@pytest.fixture
def isolated_keyring(monkeypatch: pytest.MonkeyPatch) -> MemoryKeyring:
    """Replace the process's keyring backend with an empty in-memory one for this test."""
    import keyring.core

    memory = MemoryKeyring()
    monkeypatch.setattr(keyring.core, "_keyring_backend", memory.backend)
    return memory
