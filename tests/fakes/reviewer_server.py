"""A real HTTP reviewer on 127.0.0.1: answers review requests with a scripted verdict.

Speaks the non-streaming Anthropic Messages API (``POST /v1/messages``: a ``tool_use`` block)
and OpenAI chat completions (``POST /v1/chat/completions``: a ``tool_calls`` entry), so one fake
serves both providers. Unlike ``FakeAnthropicServer`` the answer is not a queue: every request
gets ``server.answer`` (or ``server.responder(request)``), because reviewers run concurrently
and a quorum test cares about what each reviewer says, not in which order it is asked.

Usage::

    server.answer = Answer.verdict("approve")
    config = server.config("alice", timeout_s=2.0)       # a ReviewerConfig pointing here
    result = await run_quorum([config], request)
    assert server.requests[0].user_text.count("</call>") == 1

Faults: ``Answer.text`` (prose instead of the tool call), ``Answer.raw`` (any bytes as the body),
``Answer.error(status)``, ``Answer.drop()`` (close the socket without answering), ``delay_s``
(slow answer; the wait ends early when the client hangs up, counted in ``disconnects``).
``reviewer_servers`` is the fixture: ``reviewer_servers(3)`` gives three started servers.
"""

from __future__ import annotations

import itertools
import json
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from app.core.review import ReviewerConfig

_ids = itertools.count(1)


@dataclass(frozen=True)
class Answer:
    """What the fake reviewer sends back."""

    input: Any = None                  # the submit_verdict input (any JSON value)
    tool_name: str = "submit_verdict"
    text: str | None = None            # a text block / message content
    tool: bool = True                  # False: text only, no tool call
    extra_tool_calls: tuple[tuple[str, Any], ...] = ()
    status: int = 200
    raw: bytes | None = None           # the body as is (status 200 unless ``status`` says)
    drop: bool = False                 # close the connection without a response
    delay_s: float = 0.0
    stop_reason: str | None = None     # None: "tool_use" / "tool_calls" when there is a tool
    arguments_as_text: str | None = None   # OpenAI: this exact arguments string

    @classmethod
    def verdict(cls, verdict: str = "approve", risk: str = "low",
                rationale: str = "Looks fine.", concerns: list[str] | None = None,
                **options: Any) -> Answer:
        return cls(input={"verdict": verdict, "risk": risk, "rationale": rationale,
                          "concerns": list(concerns or [])}, **options)

    @classmethod
    def text_only(cls, text: str, **options: Any) -> Answer:
        return cls(text=text, tool=False, **options)

    @classmethod
    def body(cls, raw: bytes, status: int = 200, **options: Any) -> Answer:
        return cls(raw=raw, status=status, **options)

    @classmethod
    def error(cls, status: int, message: str = "Internal server error",
              **options: Any) -> Answer:
        body = {"type": "error", "error": {"type": "api_error" if status >= 500 else
                                           "authentication_error", "message": message}}
        return cls(raw=json.dumps(body).encode(), status=status, **options)

    @classmethod
    def dropped(cls, **options: Any) -> Answer:
        return cls(drop=True, **options)

    def slow(self, delay_s: float) -> Answer:
        return replace(self, delay_s=delay_s)

    # -- rendering -------------------------------------------------------------------------

    def anthropic(self, model: str) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if self.text is not None:
            content.append({"type": "text", "text": self.text})
        calls = ([(self.tool_name, self.input)] if self.tool else []) + list(
            self.extra_tool_calls)
        for name, value in calls:
            content.append({"type": "tool_use", "id": f"toolu_{next(_ids):08d}",
                            "name": name, "input": value})
        stop = self.stop_reason or ("tool_use" if calls else "end_turn")
        return {"id": f"msg_{next(_ids):08d}", "type": "message", "role": "assistant",
                "model": model, "content": content, "stop_reason": stop,
                "stop_sequence": None, "usage": {"input_tokens": 321, "output_tokens": 45}}

    def openai(self, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        calls = ([(self.tool_name, self.input)] if self.tool else []) + list(
            self.extra_tool_calls)
        if calls:
            message["tool_calls"] = [
                {"id": f"call_{next(_ids):08d}", "type": "function",
                 "function": {"name": name,
                              "arguments": self.arguments_as_text
                              if self.arguments_as_text is not None else json.dumps(value)}}
                for name, value in calls]
        finish = self.stop_reason or ("tool_calls" if calls else "stop")
        return {"id": f"chatcmpl-{next(_ids):08d}", "object": "chat.completion",
                "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 321, "completion_tokens": 45,
                          "total_tokens": 366}}


@dataclass(frozen=True)
class ReviewCall:
    """A request the fake received."""

    path: str
    headers: dict[str, str]
    body: Any
    received_at: float = field(default_factory=time.monotonic)

    @property
    def system_text(self) -> str:
        if "/chat/completions" in self.path:
            return str(self.body["messages"][0]["content"])
        return str(self.body.get("system"))

    @property
    def user_text(self) -> str:
        return str(self.body["messages"][-1]["content"])


class FakeReviewerServer:
    """See the module docstring. Thread-safe; use ``with`` or the ``reviewer_servers`` fixture."""

    def __init__(self, answer: Answer | None = None) -> None:
        self.answer = answer or Answer.verdict("approve")
        self.responder: Callable[[ReviewCall], Answer] | None = None
        self.requests: list[ReviewCall] = []
        self.disconnects = 0
        self.completed = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True,
                                        name="fake-reviewer")

    def start(self) -> FakeReviewerServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeReviewerServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def config(self, name: str, *, provider: str = "anthropic", model: str = "fake-reviewer",
               timeout_s: float = 2.0, **options: Any) -> ReviewerConfig:
        return ReviewerConfig(name=name, provider=provider, model=model,  # type: ignore[arg-type]
                              base_url=self.base_url, api_key=options.pop("api_key", "sk-test"),
                              timeout_s=timeout_s, **options)

    def _answer_for(self, call: ReviewCall) -> Answer:
        with self._lock:
            self.requests.append(call)
            responder, answer = self.responder, self.answer
        return responder(call) if responder is not None else answer

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _client_gone(self, seconds: float) -> bool:
                """Wait ``seconds``; True as soon as the client closes its end."""
                deadline = time.monotonic() + seconds
                while (left := deadline - time.monotonic()) > 0:
                    if server._stop.is_set():
                        return True
                    readable, _, _ = select.select([self.connection], [], [], min(left, 0.01))
                    if readable:
                        try:
                            if not self.connection.recv(1, socket.MSG_PEEK):
                                return True
                        except OSError:
                            return True
                        time.sleep(min(left, 0.01))  # pipelined bytes: keep waiting
                return False

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                path = self.path.split("?", 1)[0]
                call = ReviewCall(path, {k.lower(): v for k, v in self.headers.items()}, body)
                answer = server._answer_for(call)
                if answer.delay_s and self._client_gone(answer.delay_s):
                    with server._lock:
                        server.disconnects += 1
                    self.close_connection = True
                    return
                if answer.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if answer.raw is not None:
                    data = answer.raw
                elif path.endswith("/v1/messages"):
                    data = json.dumps(answer.anthropic(str((body or {}).get("model")))).encode()
                elif path.endswith("/chat/completions"):
                    data = json.dumps(answer.openai(str((body or {}).get("model")))).encode()
                else:
                    self.send_error(404)
                    return
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                    with server._lock:
                        server.completed += 1
                except (BrokenPipeError, ConnectionResetError):
                    with server._lock:
                        server.disconnects += 1
                    self.close_connection = True

        return Handler


@pytest.fixture
def reviewer_servers() -> Iterator[Callable[..., list[FakeReviewerServer]]]:
    """``reviewer_servers(n, answer=None)``: n started fake reviewers, closed after the test."""
    started: list[FakeReviewerServer] = []

    def make(n: int = 1, answer: Answer | None = None) -> list[FakeReviewerServer]:
        servers = [FakeReviewerServer(answer).start() for _ in range(n)]
        started.extend(servers)
        return servers

    yield make
    for server in started:
        server.close()
