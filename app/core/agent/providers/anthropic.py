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

Cost and reasoning: ``request_body`` marks prompt-cache breakpoints (the last tool, the system
prompt, the transcript's end and the previous request's end: four, the API's limit) so a tool
loop reads its prefix from the cache, and sends adaptive thinking and effort when the request
asks; thinking blocks come back in the turn's content, unchanged, and are never shown as text.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anthropic
import httpx

from app.core.agent.models import ModelInfo
from app.core.agent.providers.base import (
    EFFORTS,
    THINKING_DISPLAYS,
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
    """The Messages API request as JSON bytes (streaming on).

    With ``request.cache`` the prompt-cache breakpoints are marked (see ``mark_transcript``);
    the stored transcript is never modified, the marked blocks are copies. Everything before
    the transcript's end serialises to the same bytes on every turn (tools in the order given,
    dicts in their insertion order, the system prompt as one block), which is what lets the API
    find it in the cache.
    """
    cc = cache_control(request.cache_ttl) if request.cache else None
    messages = request.messages
    if cc is not None:
        messages = mark_transcript(messages, cc, MAX_BREAKPOINTS - bool(request.tools)
                                   - bool(request.system))
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": messages,
        "stream": True,
    }
    if request.system:
        # A breakpoint needs the block form; without caching the plain string, as before.
        body["system"] = ([{"type": "text", "text": request.system, "cache_control": cc}]
                          if cc is not None else request.system)
    if request.tools:
        tools = request.tools
        if cc is not None:  # the last definition: the tools stay cached if the system changes
            tools = [*tools[:-1], {**tools[-1], "cache_control": cc}]
        body["tools"] = tools
    thinking = thinking_config(request)
    if thinking is not None:
        body["thinking"] = thinking
    if request.effort in EFFORTS:
        body["output_config"] = {"effort": request.effort}
    if (thinking is None and request.temperature is not None
            and request.temperature != DEFAULT_TEMPERATURE):
        # Only sent when the profile changed it (SDK 2.x no longer types it; the API takes it).
        # With thinking on the API accepts no temperature but the default.
        body["temperature"] = request.temperature
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


# -- prompt caching -----------------------------------------------------------------------------

# The API accepts at most four blocks with cache_control in one request.
MAX_BREAKPOINTS = 4
# Blocks that cannot carry cache_control themselves (the API rejects it on them).
_UNMARKABLE = frozenset({"thinking", "redacted_thinking"})


def cache_control(ttl: str) -> dict[str, str]:
    """An ephemeral breakpoint: the default 5-minute cache, or the 1-hour one."""
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def mark_transcript(messages: list[dict[str, Any]], cc: dict[str, str],
                    budget: int) -> list[dict[str, Any]]:
    """``messages`` with breakpoints on the transcript's end (the last block of the last
    message, which moves forward every turn) and, budget allowing, on the end of the
    previous request (the last block of the user turn before the latest assistant turn).

    The first makes this request's whole prefix cacheable for the next turn; the second reads
    the previous turn's entry even when the turn added more blocks than the API looks back
    over from one breakpoint (20). Only the marked messages are copied."""
    if budget <= 0 or not messages:
        return messages
    out = list(messages)
    end = None
    for i in range(len(out) - 1, -1, -1):  # the last message with a block that can be marked
        marked = _marked(out[i], cc)
        if marked is not None:
            out[i], end = marked, i
            break
    if end is None or budget < 2:
        return out
    seen_assistant = False
    for i in range(end - 1, -1, -1):
        role = out[i].get("role")
        if role == "assistant":
            seen_assistant = True
        elif role == "user" and seen_assistant:
            marked = _marked(out[i], cc)
            if marked is not None:
                out[i] = marked
            break
    return out


def _marked(message: dict[str, Any], cc: dict[str, str]) -> dict[str, Any] | None:
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return None
        return {**message, "content": [{"type": "text", "text": content, "cache_control": cc}]}
    if not isinstance(content, list):
        return None
    for j in range(len(content) - 1, -1, -1):
        block = content[j]
        if isinstance(block, dict) and block.get("type") not in _UNMARKABLE:
            blocks = list(content)
            blocks[j] = {**block, "cache_control": cc}
            return {**message, "content": blocks}
    return None


# -- thinking -----------------------------------------------------------------------------------


def thinking_config(request: ModelRequest) -> dict[str, Any] | None:
    """The ``thinking`` parameter, or None when thinking is off. Adaptive: the model decides
    whether and how much to think (the installed SDK's ``ThinkingConfigAdaptiveParam``)."""
    if request.thinking != "adaptive":
        return None
    config: dict[str, Any] = {"type": "adaptive"}
    if request.thinking_display in THINKING_DISPLAYS:
        config["display"] = request.thinking_display
    return config


_KEPT_BLOCKS = frozenset({"text", "tool_use", "thinking", "redacted_thinking"})


class _TurnAccumulator:
    """Builds one assistant turn from the Messages API's stream events.

    Thinking and redacted-thinking blocks are kept exactly as sent (text, signature, data):
    in a tool loop the API requires them back unchanged. Their text is never passed to
    ``on_text``, which is the answer the person reads."""

    __slots__ = ("_blocks", "_on_text", "cache_creation_input_tokens",
                 "cache_read_input_tokens", "input_tokens", "output_tokens", "started",
                 "stop_reason", "stopped")

    def __init__(self, on_text: TextCallback) -> None:
        self._on_text = on_text
        self._blocks: dict[int, dict[str, Any]] = {}
        self.stop_reason: str | None = None
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_creation_input_tokens = 0
        self.cache_read_input_tokens = 0
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
            dtype = delta.get("type")
            if dtype == "text_delta":
                text = delta.get("text", "")
                if not isinstance(text, str):
                    raise TypeError("text_delta")
                block["parts"].append(text)
                if text and block["type"] == "text":
                    self._on_text(text)
            elif dtype == "input_json_delta":
                part = delta.get("partial_json", "")
                if not isinstance(part, str):
                    raise TypeError("partial_json")
                block["parts"].append(part)
            elif dtype == "thinking_delta":
                part = delta.get("thinking", "")
                if not isinstance(part, str) or block["type"] != "thinking":
                    raise TypeError("thinking_delta")
                block["parts"].append(part)
            elif dtype == "signature_delta":
                sig = delta.get("signature", "")
                if not isinstance(sig, str) or block["type"] != "thinking":
                    raise TypeError("signature_delta")
                block["signature"] += sig
        elif kind == "content_block_start":
            cb = payload.get("content_block") or {}
            ctype = cb.get("type")
            if ctype not in _KEPT_BLOCKS:
                return  # other block types (server tools) are not requested and not kept
            index = payload["index"]
            if type(index) is not int:  # finish() sorts the indexes
                raise TypeError("content_block_start")
            if ctype in ("text", "tool_use"):
                text = cb.get("text") or ""
                block = {"type": ctype, "parts": [], "id": cb.get("id", ""),
                         "name": cb.get("name", "")}
                # finish() joins the parts: they must be text.
                if not (isinstance(block["id"], str) and isinstance(block["name"], str)
                        and isinstance(text, str)):
                    raise TypeError("content_block_start")
                if ctype == "text" and text:
                    block["parts"].append(text)
                    self._on_text(text)
                self._blocks[index] = block
            elif ctype == "thinking":
                text, sig = cb.get("thinking") or "", cb.get("signature") or ""
                if not (isinstance(text, str) and isinstance(sig, str)):
                    raise TypeError("content_block_start")
                self._blocks[index] = {"type": "thinking", "parts": [text] if text else [],
                                       "signature": sig}
            elif ctype == "redacted_thinking":
                data = cb.get("data")
                if not isinstance(data, str):
                    raise TypeError("content_block_start")
                self._blocks[index] = {"type": "redacted_thinking", "parts": [], "data": data}
        elif kind == "message_start":
            self.started = True
            self._usage((payload.get("message") or {}).get("usage") or {})
        elif kind == "message_delta":
            self.stop_reason = (payload.get("delta") or {}).get("stop_reason") or self.stop_reason
            usage = payload.get("usage") or {}
            self.output_tokens = int(usage.get("output_tokens") or self.output_tokens)
            self._usage(usage)  # newer API versions repeat the input counts here, cumulative
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error" or event == "error":
            raise error_from_body(None, payload, LABEL)

    def _usage(self, usage: dict[str, Any]) -> None:
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
            value = usage.get(key)
            if value is not None:
                setattr(self, key, int(value))

    def finish(self) -> ModelTurn:
        if not self.stopped:
            raise connection_error(LABEL, "no message_stop event", mid_stream=True)
        content: list[dict[str, Any]] = []
        calls: list[ToolCall] = []
        answered = False  # a text or tool_use block: thinking alone is not a turn to keep
        for index in sorted(self._blocks):
            block = self._blocks[index]
            text = "".join(block["parts"])
            kind = block["type"]
            if kind == "text":
                if text:
                    content.append({"type": "text", "text": text})
                    answered = True
                continue
            if kind == "thinking":
                if text or block["signature"]:
                    content.append({"type": "thinking", "thinking": text,
                                    "signature": block["signature"]})
                continue
            if kind == "redacted_thinking":
                content.append({"type": "redacted_thinking", "data": block["data"]})
                continue
            call = parse_tool_call(block["id"], block["name"], text, self.stop_reason)
            calls.append(call)
            content.append({"type": "tool_use", "id": call.id, "name": call.name,
                            "input": call.input})
            answered = True
        if not answered:
            content = []
        return ModelTurn(content, calls, self.stop_reason or "end_turn", self.input_tokens,
                         self.output_tokens, self.cache_creation_input_tokens,
                         self.cache_read_input_tokens)
