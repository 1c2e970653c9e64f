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
how tests see that Stop really closed the connection.

The API's rules it enforces (a rejection is a 400 invalid_request_error and uses no scripted
response): at most four ``cache_control`` breakpoints, none on thinking blocks, 1-hour ones
before 5-minute ones; with thinking on, no temperature but 1, thinking blocks sent back with
their signature intact, and a tool-use continuation whose assistant turn starts with the
thinking blocks the server sent in it (``Thinking`` / ``RedactedThinking`` script blocks; they
are only sent when the request turned thinking on). Set ``caching = True`` to have usage
computed by the prompt-cache rules (``PromptCache``: exact prefix matches up to a breakpoint,
within the TTL, tokens estimated as len(json)/4) instead of the scripted ``input_tokens``;
``usages`` lists what each message request reported. ``RecordedRequest.body`` is the request
without its cache markers; ``wire`` is exactly what was sent.

``fake_anthropic`` is the fixture;
``fake_anthropic_env`` also points ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY at it, and
``isolated_keyring`` swaps the OS keyring for an in-memory one.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

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


@dataclass(frozen=True)
class Thinking:
    """A thinking block: ``text`` streamed as thinking_delta pieces (empty: display omitted),
    then a signature_delta. The signature is derived from the text (``signature_for``), so the
    server can tell a block sent back unchanged from an edited or invented one."""

    text: str
    chunk_chars: int = 40

    @property
    def signature(self) -> str:
        return signature_for(self.text)

    def chunks(self) -> list[str]:
        n = max(1, self.chunk_chars)
        return [self.text[i:i + n] for i in range(0, len(self.text), n)]

    def block(self) -> dict[str, Any]:
        return {"type": "thinking", "thinking": self.text, "signature": self.signature}


@dataclass(frozen=True)
class RedactedThinking:
    """A redacted_thinking block (opaque ``data``), sent whole in its content_block_start."""

    data: str = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4"

    def block(self) -> dict[str, Any]:
        return {"type": "redacted_thinking", "data": self.data}


def signature_for(thinking: str) -> str:
    """The fake's signature of a thinking text (the API's is opaque; this one is checkable)."""
    return "fakesig_" + hashlib.sha256(thinking.encode("utf-8")).hexdigest()[:40]


Block = Text | ToolUse | Thinking | RedactedThinking
ThinkingBlock = Thinking | RedactedThinking


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
            if isinstance(block, Text | Thinking):
                n += len(block.chunks()) + isinstance(block, Thinking)
            elif isinstance(block, ToolUse):
                n += len(block.json_chunks()) + 1
            else:
                n += 1
        return max(1, n)

    def with_tool_ids(self) -> Response:
        """This response with an id on every tool_use block (one answer's ids are fixed
        before it is sent, so the server can remember what went with them)."""
        if all(b.id for b in self.blocks if isinstance(b, ToolUse)):
            return self
        return replace(self, blocks=tuple(
            replace(b, id=_new_id("toolu")) if isinstance(b, ToolUse) and not b.id else b
            for b in self.blocks))

    def without_thinking(self) -> Response:
        """What the API sends when the request did not turn thinking on."""
        return replace(self, blocks=tuple(b for b in self.blocks
                                          if not isinstance(b, Thinking | RedactedThinking)))

    def usage(self, computed: dict[str, Any] | None = None) -> dict[str, Any]:
        """The input usage: ``computed`` by the server's cache model, else the scripted count."""
        if computed is not None:
            return dict(computed)
        return {"input_tokens": self.input_tokens, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0}

    def message(self, msg_id: str, usage: dict[str, Any] | None = None) -> dict[str, Any]:
        """The whole message as the non-streaming API returns it."""
        content: list[dict[str, Any]] = []
        for block in self.blocks:
            if isinstance(block, Text):
                content.append({"type": "text", "text": block.text})
            elif isinstance(block, Thinking | RedactedThinking):
                content.append(block.block())
            else:
                content.append({"type": "tool_use", "id": block.id or _new_id("toolu"),
                                "name": block.name, "input": json.loads(block.json_text())})
        return {"id": msg_id, "type": "message", "role": "assistant", "model": self.model,
                "content": content, "stop_reason": self.final_stop_reason,
                "stop_sequence": None,
                "usage": {**self.usage(usage), "output_tokens": self.output_tokens()}}

    def sse_events(self, usage: dict[str, Any] | None = None
                   ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(event name, data) pairs in the order the Messages API sends them; ``usage`` is
        the input usage the server computed (None: the scripted ``input_tokens``)."""
        msg_id = _new_id("msg")
        yield "message_start", {
            "type": "message_start",
            "message": {"id": msg_id, "type": "message", "role": "assistant",
                        "model": self.model, "content": [], "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {**self.usage(usage), "output_tokens": 1}}}
        for index, block in enumerate(self.blocks):
            if isinstance(block, Thinking):
                yield "content_block_start", {
                    "type": "content_block_start", "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
                if index == 0 and self.ping:
                    yield "ping", {"type": "ping"}
                for piece in block.chunks():
                    yield "content_block_delta", {
                        "type": "content_block_delta", "index": index,
                        "delta": {"type": "thinking_delta", "thinking": piece}}
                yield "content_block_delta", {
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "signature_delta", "signature": block.signature}}
            elif isinstance(block, RedactedThinking):
                yield "content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": block.block()}
            elif isinstance(block, Text):
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
            if isinstance(block, Thinking | RedactedThinking):
                continue  # chat completions has no thinking blocks
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


# -- the API's rules: prompt caching and thinking ---------------------------------------------

MAX_CACHE_BREAKPOINTS = 4
CACHE_LOOKBACK = 20          # blocks the API looks back from a breakpoint for an earlier entry
CACHE_TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


class RequestRejected(Exception):
    """The request breaks one of the API's rules: answered 400 invalid_request_error."""


def estimate_tokens(text: str) -> int:
    """The fake's token count: a token per four characters (of canonical JSON)."""
    return max(1, len(text) // 4)


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def prompt_elements(body: dict[str, Any]) -> list[tuple[str, dict[str, Any] | None]]:
    """The request's prompt as the cache sees it, in the API's order (tools, then system, then
    messages), one element per tool definition or content block: (canonical JSON of the element
    without its ``cache_control``, the ``cache_control`` or None). The JSON keeps the request's
    key order, so a reordered schema, an edited system prompt or a changed block is a
    different prefix, as in the API. Plain-string system prompts and message contents count
    as one text block, as the API reads them."""
    out: list[tuple[str, dict[str, Any] | None]] = []

    def add(prefix: str, element: Any) -> None:
        if isinstance(element, dict) and "cache_control" in element:
            cc = element["cache_control"]
            element = {k: v for k, v in element.items() if k != "cache_control"}
            out.append((prefix + _canonical(element), cc if isinstance(cc, dict) else {}))
        else:
            out.append((prefix + _canonical(element), None))

    for tool_def in body.get("tools") or []:
        add("tool:", tool_def)
    system = body.get("system")
    if isinstance(system, str):
        if system:
            add("system:", {"type": "text", "text": system})
    elif isinstance(system, list):
        for block in system:
            add("system:", block)
    for i, message in enumerate(body.get("messages") or []):
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks or []:
            add(f"{message.get('role')}#{i}:", block)
    return out


@dataclass
class CacheEntry:
    expires: float
    ttl: str


class PromptCache:
    """The API's prompt-cache rules, for the fake.

    Each breakpoint (a block with ``cache_control``) writes an entry for the prefix that ends
    with it: the hash of every element up to it (and the model). A later request reads the
    longest prefix that exactly matches an entry still alive, found by looking back up to
    ``CACHE_LOOKBACK`` elements from each of its own breakpoints; a hit refreshes the entry's
    lifetime. Usage: ``cache_read_input_tokens`` for the prefix read, ``cache_creation_input_
    tokens`` for what lies between it and the last breakpoint (written now), ``input_tokens``
    for the rest. Prefixes shorter than ``min_tokens`` are not cached (the API's minimum is
    1024 or more tokens depending on the model; the fake's default is 0)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, min_tokens: int = 0) -> None:
        self.clock = clock
        self.min_tokens = min_tokens
        self.entries: dict[str, CacheEntry] = {}

    def clear(self) -> None:
        self.entries.clear()

    def usage(self, body: dict[str, Any]) -> dict[str, Any]:
        elements = prompt_elements(body)
        digest = hashlib.sha256(str(body.get("model", "")).encode())
        hashes: list[str] = []
        cumulative: list[int] = []
        total = 0
        breakpoints: list[tuple[int, str]] = []
        for k, (text, cc) in enumerate(elements):
            digest.update(b"\x00" + text.encode("utf-8"))
            hashes.append(digest.hexdigest())
            total += estimate_tokens(text)
            cumulative.append(total)
            if cc is not None:
                breakpoints.append((k, "1h" if cc.get("ttl") == "1h" else "5m"))
        now = self.clock()
        self.entries = {h: e for h, e in self.entries.items() if e.expires > now}
        read_end = -1
        for b, _ttl in breakpoints:
            for k in range(b, max(-1, b - CACHE_LOOKBACK), -1):
                if hashes[k] in self.entries:
                    read_end = max(read_end, k)
                    break
        if read_end >= 0:
            entry = self.entries[hashes[read_end]]
            entry.expires = max(entry.expires, now + CACHE_TTL_SECONDS[entry.ttl])
        written = {"5m": 0, "1h": 0}
        covered = read_end
        for b, ttl in breakpoints:
            if b <= covered or cumulative[b] < self.min_tokens:
                continue
            written[ttl] += cumulative[b] - (cumulative[covered] if covered >= 0 else 0)
            covered = b
            self.entries[hashes[b]] = CacheEntry(now + CACHE_TTL_SECONDS[ttl], ttl)
        read = cumulative[read_end] if read_end >= 0 else 0
        creation = written["5m"] + written["1h"]
        return {"input_tokens": total - read - creation,
                "cache_creation_input_tokens": creation,
                "cache_read_input_tokens": read,
                "cache_creation": {"ephemeral_5m_input_tokens": written["5m"],
                                   "ephemeral_1h_input_tokens": written["1h"]}}


def check_cache_control(body: dict[str, Any]) -> None:
    """The API's limits on breakpoints: at most four, not on thinking blocks, a known TTL,
    and 1-hour entries before 5-minute ones."""
    marks: list[tuple[str, dict[str, Any]]] = []
    for tool_def in body.get("tools") or []:
        if isinstance(tool_def, dict) and "cache_control" in tool_def:
            marks.append(("tool", tool_def["cache_control"]))
    system = body.get("system")
    for block in system if isinstance(system, list) else []:
        if isinstance(block, dict) and "cache_control" in block:
            marks.append(("text", block["cache_control"]))
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and "cache_control" in block:
                marks.append((str(block.get("type")), block["cache_control"]))
    if len(marks) > MAX_CACHE_BREAKPOINTS:
        raise RequestRejected(f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control "
                              f"may be provided. Found {len(marks)}.")
    seen_5m = False
    for kind, cc in marks:
        if kind in ("thinking", "redacted_thinking"):
            raise RequestRejected(f"cache_control cannot be set on {kind} blocks.")
        if not isinstance(cc, dict) or cc.get("type") != "ephemeral" \
                or cc.get("ttl", "5m") not in CACHE_TTL_SECONDS:
            raise RequestRejected(f"cache_control: invalid value {cc!r}.")
        if cc.get("ttl", "5m") == "5m":
            seen_5m = True
        elif seen_5m:
            raise RequestRejected("A cache_control with ttl='1h' must not come after one with "
                                  "ttl='5m'.")


def thinking_enabled(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


MISSING_THINKING = (
    "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`."
    " When `thinking` is enabled, a final `assistant` message must start with a thinking block "
    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you "
    "include thinking blocks from previous turns. To avoid this requirement, disable `thinking`.")


def check_thinking(body: dict[str, Any], issued: dict[str, tuple[dict[str, Any], ...]],
                   redacted: set[str]) -> None:
    """With thinking on, as the API: no temperature but 1; thinking blocks sent back must be
    the ones the server sent (signature / data intact); and a tool-use continuation must
    start the assistant turn it continues with that turn's thinking blocks, unchanged.
    ``issued`` maps each tool_use id the server sent to the thinking blocks of its turn."""
    if not thinking_enabled(body):
        return
    temperature = body.get("temperature")
    if temperature is not None and temperature != 1:
        raise RequestRejected("`temperature` may only be set to 1 when thinking is enabled.")
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    for i, message in enumerate(messages):
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "thinking" and block.get("signature") != signature_for(
                    str(block.get("thinking"))):
                raise RequestRejected(f"messages.{i}.content.{j}: Invalid `signature` in "
                                      "`thinking` block")
            if kind == "redacted_thinking" and block.get("data") not in redacted:
                raise RequestRejected(f"messages.{i}.content.{j}: Invalid `data` in "
                                      "`redacted_thinking` block")
    if len(messages) < 2 or messages[-1].get("role") != "user":
        return
    last = messages[-1].get("content")
    if not (isinstance(last, list) and any(isinstance(b, dict) and b.get("type") == "tool_result"
                                           for b in last)):
        return
    i = len(messages) - 2
    turn = messages[i]
    content = turn.get("content") if turn.get("role") == "assistant" else None
    if not isinstance(content, list):
        return
    wanted: tuple[dict[str, Any], ...] = ()
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            wanted = issued.get(str(block.get("id")), ()) or wanted
    if not wanted:
        return  # the model did not think in that turn: nothing to send back
    sent = tuple(b for b in content[:len(wanted)] if isinstance(b, dict))
    if sent != wanted:
        first = content[0].get("type") if content and isinstance(content[0], dict) else "none"
        if first in ("thinking", "redacted_thinking"):
            raise RequestRejected(f"messages.{i}.content: the thinking blocks of the turn "
                                  "being continued must be sent back unchanged.")
        raise RequestRejected(MISSING_THINKING.format(i=i, found=first))


# -- the server ----------------------------------------------------------------------------


def without_cache_markers(body: Any) -> Any:
    """A Messages API request as its content: every top-level ``cache_control`` removed from
    tools, system and message blocks, and a system prompt of one plain text block as the
    string it stands for (the API reads both the same). Tests of the conversation compare
    this; tests of the prompt cache read ``RecordedRequest.wire``."""
    if not isinstance(body, dict):
        return body

    def strip(items: Any) -> Any:
        if not isinstance(items, list):
            return items
        return [{k: v for k, v in item.items() if k != "cache_control"}
                if isinstance(item, dict) and "cache_control" in item else item
                for item in items]

    out = dict(body)
    if "tools" in out:
        out["tools"] = strip(out["tools"])
    if isinstance(out.get("system"), list):
        system = strip(out["system"])
        if len(system) == 1 and isinstance(system[0], dict) and set(system[0]) == {"type", "text"} \
                and system[0]["type"] == "text":
            system = system[0]["text"]
        out["system"] = system
    if isinstance(out.get("messages"), list):
        out["messages"] = [{**m, "content": strip(m["content"])}
                           if isinstance(m, dict) and isinstance(m.get("content"), list) else m
                           for m in out["messages"]]
    return out


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]   # lower-cased names
    body: Any                 # parsed JSON, or None; for /v1/messages without cache markers
    raw: bytes
    wire: Any = None          # parsed JSON exactly as sent, cache_control included

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
        # Responses for requests to one model (a sub-agent's), taken before the main queue.
        self._by_model: dict[str, deque[Response]] = {}
        self.requests: list[RecordedRequest] = []
        # An id, or a dict of /v1/models fields over the defaults (created_at, line,
        # lifecycle, retires_at), for tests that pick the newest model or warn about one.
        self.models: list[str | dict[str, Any]] = list(DEFAULT_MODELS)
        self.models_error: Response | None = None
        # Paging of /v1/models: ``models_page_size`` entries a page (after ``after_id``);
        # ``models_endless`` answers every page with a new model and ``has_more`` (a hostile
        # server the client must stop asking).
        self.models_page_size: int | None = None
        self.models_endless = False
        # When set, a request must carry this key (x-api-key or a Bearer token), else 401 —
        # as the API answers a wrong key. The 401 does not use up a scripted response.
        self.api_key: str | None = None
        # The prompt cache: off by default, so the scripted ``input_tokens`` are reported;
        # on, usage is computed from each request (estimate_tokens) by the cache's rules.
        self.caching = False
        self.cache = PromptCache()
        # The input usage reported for each Anthropic message request, in order.
        self.usages: list[dict[str, Any]] = []
        # tool_use id → the thinking blocks of the turn that sent it; redacted data sent.
        self._thinking_issued: dict[str, tuple[dict[str, Any], ...]] = {}
        self._redacted_issued: set[str] = set()
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

    def script_for(self, model: str, *responses: Response) -> FakeAnthropicServer:
        """Queue responses for the requests that name ``model`` (e.g. a sub-agent running
        at the same time as its parent): those never take from the main queue."""
        with self._lock:
            self._by_model.setdefault(model, deque()).extend(responses)
        return self

    def clear(self) -> None:
        with self._lock:
            self._by_model.clear()
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

    def _next(self, model: object = None) -> Response | None:
        with self._lock:
            own = self._by_model.get(model) if isinstance(model, str) else None
            if own is not None:
                if own:
                    return own.popleft()
                self.unscripted += 1
                return None
            if self._queue:
                return self._queue.popleft()
            self.unscripted += 1
            return None

    def _answer(self, resp: Response, body: dict[str, Any]) -> Response:
        """The scripted answer as the API would send it for ``body``: thinking only when the
        request turned it on; the turn's thinking blocks remembered under its tool_use ids."""
        if not thinking_enabled(body):
            return resp.without_thinking()
        resp = resp.with_tool_ids()
        thinking = tuple(b.block() for b in resp.blocks if isinstance(b, Thinking
                                                                      | RedactedThinking))
        with self._lock:
            for b in resp.blocks:
                if isinstance(b, RedactedThinking):
                    self._redacted_issued.add(b.data)
                elif isinstance(b, ToolUse) and thinking:
                    self._thinking_issued[b.id] = thinking
        return resp

    def _models_page(self, query: str) -> tuple[list[dict[str, Any]], bool]:
        if self.models_endless:
            with self._lock:
                n = sum(1 for r in self.requests if r.path == "/v1/models")
            return [_model_entry(f"claude-endless-{n}")], True
        data = [_model_entry(m) for m in self.models]
        after = parse_qs(query).get("after_id", [None])[0]
        ids = [m["id"] for m in data]
        if after in ids:
            data = data[ids.index(after) + 1:]
        size = self.models_page_size or len(data)
        return data[:size], len(data) > size

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
                    wire = json.loads(raw) if raw else None
                except ValueError:
                    wire = None
                parts = urlsplit(self.path)
                body = without_cache_markers(wire) if parts.path == "/v1/messages" else wire
                req = RecordedRequest(self.command, parts.path, parts.query,
                                      {k.lower(): v for k, v in self.headers.items()}, body, raw,
                                      wire)
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
                    data, has_more = server._models_page(req.query)
                    self._json(200, {"data": data, "has_more": has_more, "object": "list",
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
                openai = req.path == "/v1/chat/completions"
                body = req.wire if isinstance(req.wire, dict) else {}
                if not openai:
                    try:
                        with server._lock:  # the API's checks; a rejection uses no script
                            check_cache_control(body)
                            check_thinking(body, server._thinking_issued,
                                           server._redacted_issued)
                    except RequestRejected as exc:
                        self._json(400, Response.error(400, message=str(exc)).error_body(),
                                   (("x-should-retry", "false"),))
                        return
                resp = server._next(body.get("model") if isinstance(body, dict) else None)
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
                stream = bool(body.get("stream"))
                usage = None
                if not openai:
                    resp = server._answer(resp, body)
                    if server.caching:
                        with server._lock:
                            usage = server.cache.usage(body)
                    with server._lock:
                        server.usages.append(resp.usage(usage))
                if not stream:
                    if openai:
                        self._json(500, {"error": {"message": "fake: only streaming"}})
                    else:
                        self._json(200, resp.message(_new_id("msg"), usage), resp.headers)
                    return
                self._stream(resp, openai, usage)

            def _stream(self, resp: Response, openai: bool,
                        usage: dict[str, Any] | None = None) -> None:
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
                              for name, data in resp.sse_events(usage))
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
