"""The Anthropic Messages API over httpx, streamed, without the SDK.

The SDK was used only for what a few lines do here: the auth and version headers, retries with
backoff and status errors (now ``http_retry``, shared with the OpenAI-compatible provider) and
the paging of ``/v1/models``. Importing it cost ~56 MB and ~2,900 modules; the app never loads
it now (tests/unit/agent/test_anthropic_transport.py checks). The request goes out as JSON bytes
and the SSE body is decoded here:

- ``json.dumps`` of the transcript is C-fast, where building typed request objects deep-copies
  it in Python on every turn (several ms per turn in a long tool loop);
- decoding events ourselves gives full control over what a broken stream means: an
  ``event: error`` mid-stream, a connection dropped before ``message_stop`` or tool input that
  is not valid JSON each become a precise outcome.

tests/bench/bench_agent_loop.py measures the loop against raw httpx.

The request body (prompt-cache breakpoints, thinking, effort) is built by
``anthropic_request``; thinking blocks come back in the turn's content, unchanged, and are
never shown as text.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Callable
from typing import Any

import httpx

from app.core.agent.models.anthropic_request import request_body
from app.core.agent.models.base import (
    MalformedStream,
    ModelRequest,
    ModelTurn,
    ProviderAuthError,
    TextCallback,
    ToolCall,
    connection_error,
    error_from_body,
)
from app.core.agent.models.catalog import ModelInfo
from app.core.agent.models.http_retry import get_json, keepalive_transport, open_response
from app.core.agent.models.stream_notices import tell_thinking
from app.core.agent.models.tool_calls import parse_tool_call
from app.core.agent.sse import bounded_lines, iter_sse

log = logging.getLogger(__name__)

LABEL = "Anthropic API"
DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
# Streams can think for a long time between events, but the API pings every few seconds, so a
# long read timeout only bites on a dead connection.
DEFAULT_TIMEOUT = 300.0
CONNECT_TIMEOUT = 10.0
# /v1/models pages: the API's largest page, and a bound so a server that always answers
# ``has_more`` cannot keep the client asking forever.
MODELS_PAGE_LIMIT = 1000
MAX_MODEL_PAGES = 20


@functools.cache
def user_agent() -> str:
    try:
        from importlib.metadata import version

        return f"tebiki/{version('tebiki')}"
    except Exception:  # not installed as a distribution (a source checkout)
        return "tebiki"


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, *, api_key: str, base_url: str | None = None, max_retries: int = 2,
                 timeout: float | None = None) -> None:
        # The base URL is the host root, as for the SDK: ``/v1/messages`` is appended to it
        # (a path in it is kept: ``https://proxy.example/anthropic`` works).
        root = (base_url or os.environ.get("ANTHROPIC_BASE_URL", "").strip()
                or DEFAULT_BASE_URL)
        api_key = api_key.strip()
        if not (api_key.isascii() and api_key.isprintable()):
            # An HTTP header cannot carry it; say so instead of failing inside httpx.
            raise ProviderAuthError("The Anthropic API key contains characters an API key "
                                    "cannot have (a line break or a non-ASCII character, "
                                    "perhaps from pasting). " + ProviderAuthError.advice)
        self.max_retries = max(0, int(max_retries))
        self._http = httpx.AsyncClient(
            base_url=root, transport=keepalive_transport(), follow_redirects=False,
            timeout=httpx.Timeout(timeout or DEFAULT_TIMEOUT, connect=CONNECT_TIMEOUT),
            headers={"x-api-key": api_key, "anthropic-version": API_VERSION,
                     "user-agent": user_agent()})

    async def aclose(self) -> None:
        await self._http.aclose()

    async def list_models(self) -> list[str]:
        return [str(item["id"]) for item in await self._model_items()]

    async def list_model_infos(self) -> list[ModelInfo]:
        """The models with release date, line and lifecycle: the default model is the newest
        of its line, and a deprecated saved model is warned about
        (app.core.agent.models.catalog)."""
        found = [ModelInfo.from_api(item) for item in await self._model_items()]
        return [info for info in found if info is not None]

    async def _model_items(self) -> list[dict[str, Any]]:
        """Every ``/v1/models`` entry with a string id, following ``has_more`` / ``last_id``
        for at most MAX_MODEL_PAGES pages."""
        items: list[dict[str, Any]] = []
        params: dict[str, Any] = {"limit": MODELS_PAGE_LIMIT}
        for _ in range(MAX_MODEL_PAGES):
            request = self._http.build_request("GET", "/v1/models", params=params)
            page = await get_json(self._http, request, max_retries=self.max_retries,
                                  label=LABEL)
            data = page.get("data") if isinstance(page, dict) else None
            if not isinstance(data, list):
                raise MalformedStream(f"{LABEL} sent an unreadable model list. Retry.")
            entries = [m for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]
            items.extend(entries)
            last_id = page.get("last_id")
            if not isinstance(last_id, str) and entries:
                last_id = entries[-1]["id"]
            # No cursor, or one that does not move: there is no next page to ask for.
            if page.get("has_more") is not True or not isinstance(last_id, str) \
                    or last_id == params.get("after_id"):
                return items
            params = {"limit": MODELS_PAGE_LIMIT, "after_id": last_id}
        log.warning("%s: the model list still had more after %d pages; using those",
                    LABEL, MAX_MODEL_PAGES)
        return items

    async def stream(self, request: ModelRequest, on_text: TextCallback) -> ModelTurn:
        http_request = self._http.build_request(
            "POST", "/v1/messages", content=request_body(request),
            headers={"content-type": "application/json", "accept": "text/event-stream"})
        response = await open_response(self._http, http_request,
                                       max_retries=self.max_retries, label=LABEL)
        acc = _TurnAccumulator(on_text)
        try:
            async for sse in iter_sse(bounded_lines(response.aiter_text(), LABEL)):
                acc.feed(sse.event, sse.data)
        except httpx.RequestError as exc:  # mid-stream: never replayed, text was shown
            raise connection_error(LABEL, exc, mid_stream=acc.started) from None
        finally:
            await response.aclose()
        return acc.finish()


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
        take = _EVENT_TAKERS.get(kind) if isinstance(kind, str) else None
        if take is not None:
            take(self, payload)
        elif event == "error":
            raise error_from_body(None, payload, LABEL)

    def _content_block_delta(self, payload: dict[str, Any]) -> None:
        delta = payload["delta"]
        block = self._blocks.get(payload["index"])
        if block is None:
            return
        dtype = delta.get("type")
        spec = _DELTAS.get(dtype) if isinstance(dtype, str) else None
        if spec is None:
            return
        key, only_in = spec
        part = delta.get(key, "")
        if not isinstance(part, str) or (only_in is not None and block["type"] != only_in):
            raise TypeError(dtype)
        if dtype == "signature_delta":
            block["signature"] += part
            return
        block["parts"].append(part)
        if dtype == "text_delta" and part and block["type"] == "text":
            self._on_text(part)
        elif dtype == "thinking_delta" and part:
            tell_thinking(part)  # shown live, collapsed; never part of the answer

    def _content_block_start(self, payload: dict[str, Any]) -> None:
        cb = payload.get("content_block") or {}
        ctype = cb.get("type")
        if ctype not in _KEPT_BLOCKS:
            return  # other block types (server tools) are not requested and not kept
        index = payload["index"]
        if type(index) is not int:  # finish() sorts the indexes
            raise TypeError("content_block_start")
        self._blocks[index] = self._started_block(ctype, cb)

    def _started_block(self, ctype: str, cb: dict[str, Any]) -> dict[str, Any]:
        """A kept block as it starts; the start of a text block is shown at once."""
        if ctype == "thinking":
            text, sig = cb.get("thinking") or "", cb.get("signature") or ""
            if not (isinstance(text, str) and isinstance(sig, str)):
                raise TypeError("content_block_start")
            return {"type": "thinking", "parts": [text] if text else [], "signature": sig}
        if ctype == "redacted_thinking":
            data = cb.get("data")
            if not isinstance(data, str):
                raise TypeError("content_block_start")
            return {"type": "redacted_thinking", "parts": [], "data": data}
        text = cb.get("text") or ""
        block = {"type": ctype, "parts": [], "id": cb.get("id", ""), "name": cb.get("name", "")}
        # finish() joins the parts: they must be text.
        if not (isinstance(block["id"], str) and isinstance(block["name"], str)
                and isinstance(text, str)):
            raise TypeError("content_block_start")
        if ctype == "text" and text:
            block["parts"].append(text)
            self._on_text(text)
        return block

    def _message_start(self, payload: dict[str, Any]) -> None:
        self.started = True
        self._usage((payload.get("message") or {}).get("usage") or {})

    def _message_delta(self, payload: dict[str, Any]) -> None:
        self.stop_reason = (payload.get("delta") or {}).get("stop_reason") or self.stop_reason
        usage = payload.get("usage") or {}
        self.output_tokens = int(usage.get("output_tokens") or self.output_tokens)
        self._usage(usage)  # newer API versions repeat the input counts here, cumulative

    def _message_stop(self, payload: dict[str, Any]) -> None:
        self.stopped = True

    def _error(self, payload: dict[str, Any]) -> None:
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


# The stream's events by type (other types are ignored; an ``event: error`` line raises).
_EVENT_TAKERS: dict[str, Callable[[_TurnAccumulator, dict[str, Any]], None]] = {
    "content_block_delta": _TurnAccumulator._content_block_delta,
    "content_block_start": _TurnAccumulator._content_block_start,
    "message_start": _TurnAccumulator._message_start,
    "message_delta": _TurnAccumulator._message_delta,
    "message_stop": _TurnAccumulator._message_stop,
    "error": _TurnAccumulator._error,
}
# A content block delta's type: (the key of its text, the block type it may extend; None: any).
_DELTAS: dict[str, tuple[str, str | None]] = {
    "text_delta": ("text", None),
    "input_json_delta": ("partial_json", None),
    "thinking_delta": ("thinking", "thinking"),
    "signature_delta": ("signature", "thinking"),
}
