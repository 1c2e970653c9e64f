"""The Anthropic Messages API through the official async SDK, streamed.

The SDK does what it is good at: authentication headers, the API version, retries with backoff
for 408/409/429/5xx/529 and connection errors (honouring ``retry-after``), and status errors
(``AuthenticationError``, ``RateLimitError``, ``OverloadedError``, ...). We hand it the request
as JSON bytes through its raw-request method (``client.post(..., content=...)``) and read the
SSE body ourselves instead of iterating SDK event objects:

- ``messages.create()`` deep-copies the whole transcript in Python before every request, which
  grew to several ms per turn in a long tool loop; ``json.dumps`` of the same is C-fast;
- decoding events ourselves costs about half the CPU per token of building a pydantic object per
  event, and gives full control over what a broken stream means: an ``event: error``
  mid-stream, a connection dropped before ``message_stop`` or tool input that is not valid JSON
  each become a precise outcome instead of an exception from the SDK's accumulator.

tests/bench/bench_agent_loop.py measures both against raw httpx.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anthropic
import httpx

from app.core.agent.models import ModelInfo
from app.core.agent.providers.base import (
    MalformedStream,
    ModelRequest,
    ModelTurn,
    TextCallback,
    ToolCall,
    connection_error,
    error_from_body,
    map_exception,
)
from app.core.agent.providers.tool_calls import parse_tool_call
from app.core.agent.sse import iter_sse

log = logging.getLogger(__name__)

LABEL = "Anthropic API"
# Streams can think for a long time between events, but the API pings every few seconds, so a
# long read timeout only bites on a dead connection.
DEFAULT_TIMEOUT = 300.0
DEFAULT_TEMPERATURE = 1.0

try:  # the SDK's own HTTP stack (httpx2 in SDK 2.x); its transport errors are not wrapped
    import httpx2

    _RAW_RESPONSE: Any = httpx2.Response
    _TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (httpx.TransportError,
                                                          httpx2.TransportError)
except ImportError:  # pragma: no cover - older SDKs use httpx
    _RAW_RESPONSE = httpx.Response
    _TRANSPORT_ERRORS = (httpx.TransportError,)
# What can fail inside an SDK call: its status and connection errors and the transport errors
# of either HTTP stack. base.map_exception says which ProviderError each one is.
_API_ERRORS: tuple[type[BaseException], ...] = (anthropic.APIError, *_TRANSPORT_ERRORS)


def _mapped(exc: BaseException, *, mid_stream: bool = False) -> BaseException:
    """The ProviderError for ``exc``; ``exc`` itself if it is none of the SDK's errors."""
    return map_exception(exc, LABEL, mid_stream=mid_stream) or exc


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, *, api_key: str, base_url: str | None = None, max_retries: int = 2,
                 timeout: float | None = None) -> None:
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=max_retries,
            timeout=anthropic.Timeout(timeout or DEFAULT_TIMEOUT, connect=10.0),
            open_telemetry=False)  # no spans (and no trace headers) for a desktop app

    async def aclose(self) -> None:
        await self._client.close()

    async def list_models(self) -> list[str]:
        try:
            return [m.id async for m in self._client.models.list(limit=1000)]
        except _API_ERRORS as exc:
            raise _mapped(exc) from None

    async def list_model_infos(self) -> list[ModelInfo]:
        """The models with release date, line and lifecycle: the default model is the newest
        of its line, and a deprecated saved model is warned about (app.core.agent.models)."""
        try:
            found = [ModelInfo.from_api(m.model_dump(mode="json"))
                     async for m in self._client.models.list(limit=1000)]
        except _API_ERRORS as exc:
            raise _mapped(exc) from None
        return [info for info in found if info is not None]

    async def stream(self, request: ModelRequest, on_text: TextCallback) -> ModelTurn:
        acc = _TurnAccumulator(on_text)
        try:
            # The SDK's documented raw-request path: it still does auth, the API version,
            # retries and status errors, but takes our JSON bytes as they are. Through
            # messages.create() it deep-copies the whole transcript in Python on every turn,
            # which made a long tool loop several ms per call slower (bench_agent_loop.py).
            response = await self._client.post(
                "/v1/messages", cast_to=_RAW_RESPONSE, content=request_body(request),
                options={"headers": {"Content-Type": "application/json",
                                     "Accept": "text/event-stream"}},
                stream=True)
            try:
                async for sse in iter_sse(response.aiter_lines()):
                    acc.feed(sse.event, sse.data)
            finally:
                await response.aclose()
        except _API_ERRORS as exc:
            raise _mapped(exc, mid_stream=acc.started) from None
        return acc.finish()


def request_body(request: ModelRequest) -> bytes:
    """The Messages API request as JSON bytes (streaming on)."""
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": request.messages,
        "stream": True,
    }
    if request.system:
        body["system"] = request.system
    if request.tools:
        body["tools"] = request.tools
    if request.temperature is not None and request.temperature != DEFAULT_TEMPERATURE:
        # Only sent when the profile changed it (SDK 2.x no longer types it; the API takes it).
        body["temperature"] = request.temperature
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class _TurnAccumulator:
    """Builds one assistant turn from the Messages API's stream events."""

    __slots__ = ("_blocks", "_on_text", "input_tokens", "output_tokens", "started",
                 "stop_reason", "stopped")

    def __init__(self, on_text: TextCallback) -> None:
        self._on_text = on_text
        self._blocks: dict[int, dict[str, Any]] = {}
        self.stop_reason: str | None = None
        self.input_tokens = 0
        self.output_tokens = 0
        self.started = False
        self.stopped = False

    def feed(self, event: str | None, data: str) -> None:
        if event == "ping":
            return
        try:
            payload = json.loads(data)
        except ValueError:
            raise MalformedStream(f"{LABEL} sent an unreadable stream event ({event}). "
                                  "Retry.") from None
        try:
            self._take(event, payload)
        except (AttributeError, KeyError, TypeError, ValueError):
            # An event of the wrong shape is the server's fault, not an internal error.
            raise MalformedStream(f"{LABEL} sent a malformed stream event ({event}). "
                                  "Retry.") from None

    def _take(self, event: str | None, payload: Any) -> None:
        kind = payload.get("type") if isinstance(payload, dict) else None
        if kind == "content_block_delta":
            delta = payload["delta"]
            block = self._blocks.get(payload["index"])
            if block is None:
                return
            if delta.get("type") == "text_delta":
                text = delta.get("text", "")
                if not isinstance(text, str):
                    raise TypeError("text_delta")
                block["parts"].append(text)
                if text:
                    self._on_text(text)
            elif delta.get("type") == "input_json_delta":
                part = delta.get("partial_json", "")
                if not isinstance(part, str):
                    raise TypeError("partial_json")
                block["parts"].append(part)
        elif kind == "content_block_start":
            cb = payload.get("content_block") or {}
            if cb.get("type") in ("text", "tool_use"):
                index, text = payload["index"], cb.get("text") or ""
                block = {"type": cb["type"], "parts": [], "id": cb.get("id", ""),
                         "name": cb.get("name", "")}
                # finish() sorts the indexes and joins the parts: they must be ints and text.
                if not (type(index) is int and isinstance(block["id"], str)
                        and isinstance(block["name"], str) and isinstance(text, str)):
                    raise TypeError("content_block_start")
                if cb["type"] == "text" and cb.get("text"):
                    block["parts"].append(cb["text"])
                    self._on_text(cb["text"])
                self._blocks[index] = block
            # other block types (thinking, server tools) are not requested and not kept
        elif kind == "message_start":
            self.started = True
            usage = (payload.get("message") or {}).get("usage") or {}
            self.input_tokens = int(usage.get("input_tokens") or 0)
        elif kind == "message_delta":
            self.stop_reason = (payload.get("delta") or {}).get("stop_reason") or self.stop_reason
            usage = payload.get("usage") or {}
            self.output_tokens = int(usage.get("output_tokens") or self.output_tokens)
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error" or event == "error":
            raise error_from_body(None, payload, LABEL)

    def finish(self) -> ModelTurn:
        if not self.stopped:
            raise connection_error(LABEL, "no message_stop event", mid_stream=True)
        content: list[dict[str, Any]] = []
        calls: list[ToolCall] = []
        for index in sorted(self._blocks):
            block = self._blocks[index]
            text = "".join(block["parts"])
            if block["type"] == "text":
                if text:
                    content.append({"type": "text", "text": text})
                continue
            call = parse_tool_call(block["id"], block["name"], text, self.stop_reason)
            calls.append(call)
            content.append({"type": "tool_use", "id": call.id, "name": call.name,
                            "input": call.input})
        return ModelTurn(content, calls, self.stop_reason or "end_turn", self.input_tokens,
                         self.output_tokens)
