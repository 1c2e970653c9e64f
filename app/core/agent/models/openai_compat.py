"""An OpenAI-compatible chat-completions provider (Ollama, llama.cpp server, LM Studio, vLLM).

Speaks ``POST {base}/chat/completions`` with ``stream: true`` and function tools over httpx, and
maps it onto the loop's Anthropic-format transcript: assistant tool calls become ``tool_use``
blocks, ``tool_result`` blocks go back as ``role: tool`` messages, and finish reasons map to
stop reasons (tool_calls → tool_use, stop → end_turn, length → max_tokens). Retries 408, 409,
429, 5xx and connection failures before the first byte by the rules both providers share
(``http_retry``).
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from app.core.agent.models.base import (
    MalformedStream,
    ModelRequest,
    ModelTurn,
    TextCallback,
    ToolCall,
    connection_error,
    error_from_body,
)
from app.core.agent.models.http_retry import get_json, open_response
from app.core.agent.models.tool_calls import parse_tool_call
from app.core.agent.sse import bounded_lines, iter_sse

LABEL = "OpenAI-compatible API"
DEFAULT_TIMEOUT = 300.0
_FINISH_TO_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use",
                   "length": "max_tokens", "content_filter": "refusal"}
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def normalize_base_url(url: str) -> str:
    """Accept ``http://host:port`` or ``.../v1``; return the URL that ``/chat/completions``
    and ``/models`` hang off."""
    url = url.strip().rstrip("/")
    if url.endswith("/chat/completions"):
        url = url[: -len("/chat/completions")]
    if not re.search(r"/v\d+[a-z]*$", url):
        url += "/v1"
    return url + "/"


class OpenAICompatibleProvider:
    name = "openai_compatible"

    def __init__(self, *, base_url: str, api_key: str | None = None, max_retries: int = 2,
                 timeout: float | None = None) -> None:
        headers = {"Accept": "text/event-stream"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.max_retries = max(0, int(max_retries))
        self._http = httpx.AsyncClient(
            base_url=normalize_base_url(base_url), headers=headers,
            timeout=httpx.Timeout(timeout or DEFAULT_TIMEOUT, connect=10.0))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def list_models(self) -> list[str]:
        data = await get_json(self._http, self._http.build_request("GET", "models"),
                              max_retries=self.max_retries, label=LABEL)
        items = data.get("data") if isinstance(data, dict) else None
        return [m["id"] for m in items or [] if isinstance(m, dict) and isinstance(m.get("id"),
                                                                                   str)]

    async def stream(self, request: ModelRequest, on_text: TextCallback) -> ModelTurn:
        http_request = self._http.build_request("POST", "chat/completions",
                                                json=build_body(request))
        resp = await open_response(self._http, http_request, max_retries=self.max_retries,
                                   label=LABEL)
        try:
            return await _read_stream(resp, on_text)
        except httpx.RequestError as exc:  # mid-stream: never replayed, text was shown
            raise connection_error(LABEL, exc, mid_stream=True) from None
        finally:
            await resp.aclose()


async def _read_stream(resp: httpx.Response, on_text: TextCallback) -> ModelTurn:
    text_parts: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    done = False
    input_tokens = output_tokens = 0
    async for sse in iter_sse(bounded_lines(resp.aiter_text(), LABEL)):
        if sse.data.strip() == "[DONE]":
            done = True
            break
        try:
            chunk = json.loads(sse.data)
        except ValueError:
            raise MalformedStream(f"{LABEL} sent an unreadable stream chunk. Retry.") from None
        if not isinstance(chunk, dict):
            continue
        if isinstance(chunk.get("error"), dict | str):
            raise error_from_body(None, chunk, LABEL)
        try:
            finish = _take_chunk(chunk, text_parts, calls, on_text) or finish
            usage = chunk.get("usage")
            if isinstance(usage, dict):
                input_tokens = int(usage.get("prompt_tokens") or input_tokens)
                output_tokens = int(usage.get("completion_tokens") or output_tokens)
        except (AttributeError, KeyError, TypeError, ValueError):
            # A chunk of the wrong shape (a list where an object belongs, a non-numeric
            # index, ...) is the server's fault; say so instead of failing as an internal error.
            raise MalformedStream(f"{LABEL} sent a malformed stream chunk. Retry.") from None
    if not done and finish is None:
        raise connection_error(LABEL, "no finish_reason or [DONE]", mid_stream=True)
    stop = _FINISH_TO_STOP.get(finish or "stop", finish or "end_turn")
    content_blocks: list[dict[str, Any]] = []
    text = "".join(text_parts)
    if text:
        content_blocks.append({"type": "text", "text": text})
    tool_calls: list[ToolCall] = []
    for n, index in enumerate(sorted(calls)):
        slot = calls[index]
        call_id = _ID_UNSAFE.sub("_", slot["id"]) or f"call_{n}"
        call = parse_tool_call(call_id, slot["name"], "".join(slot["args"]), stop)
        tool_calls.append(call)
        content_blocks.append({"type": "tool_use", "id": call.id, "name": call.name,
                               "input": call.input})
    if tool_calls and stop == "end_turn":
        stop = "tool_use"  # some servers say "stop" even when they called tools
    return ModelTurn(content_blocks, tool_calls, stop, input_tokens, output_tokens)


def _take_chunk(chunk: dict[str, Any], text_parts: list[str], calls: dict[int, dict[str, Any]],
                on_text: TextCallback) -> str | None:
    """Add one chunk's text and tool-call pieces; returns its finish_reason, if any."""
    finish: str | None = None
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") or {}
        content = delta.get("content")
        if content:
            if not isinstance(content, str):
                raise TypeError("content")
            text_parts.append(content)
            on_text(content)
        for tc in delta.get("tool_calls") or ():
            slot = calls.setdefault(int(tc.get("index", len(calls))),
                                    {"id": "", "name": "", "args": []})
            if tc.get("id"):
                slot["id"] = str(tc["id"])
            fn = tc.get("function") or {}
            if fn.get("name"):
                slot["name"] += str(fn["name"])
            args = fn.get("arguments")
            if args:
                # Some servers send the arguments as an object rather than JSON text.
                slot["args"].append(args if isinstance(args, str)
                                    else json.dumps(args, ensure_ascii=False))
        if choice.get("finish_reason"):
            finish = str(choice["finish_reason"])
    return finish


def build_body(request: ModelRequest) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": request.model,
        "messages": to_openai_messages(request.system, request.messages),
        "max_tokens": request.max_tokens,
        "stream": True,
        # No "stream_options": some local servers reject unknown fields; usage is optional.
    }
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.tools:
        body["tools"] = [{"type": "function",
                          "function": {"name": t["name"], "description": t.get("description", ""),
                                       "parameters": t.get("input_schema", {"type": "object"})}}
                         for t in request.tools]
    return body


def to_openai_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic-format transcript → chat-completions messages."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for msg in messages:
        content = msg["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if msg["role"] == "assistant":
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            calls = [{"id": b["id"], "type": "function",
                      "function": {"name": b["name"],
                                   "arguments": json.dumps(b.get("input") or {},
                                                           ensure_ascii=False)}}
                     for b in blocks if b.get("type") == "tool_use"]
            item: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                item["tool_calls"] = calls
            out.append(item)
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                result = _result_text(b.get("content", ""))
                if b.get("is_error"):
                    result = f"Error: {result}"
                out.append({"role": "tool", "tool_call_id": b["tool_use_id"], "content": result})
        user = _user_content(blocks)
        if user:
            out.append({"role": "user", "content": user})
    return out


PDF_OMITTED = ("[PDF {title} omitted: Tebiki sends attached PDFs to OpenAI-compatible "
               "endpoints only as a note]")


def _user_content(blocks: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """The person's part of a user turn: its text, attached text documents as text, and
    attached images as data-URL ``image_url`` parts (the content is then a list of parts, as
    chat completions takes images). Empty when the turn holds only tool results."""
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for b in blocks:
        kind = b.get("type")
        raw_source = b.get("source")
        source: dict[str, Any] = raw_source if isinstance(raw_source, dict) else {}
        if kind == "text":
            texts.append(str(b.get("text", "")))
        elif kind == "image" and source.get("type") == "base64":
            url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
            images.append({"type": "image_url", "image_url": {"url": url}})
        elif kind == "document":
            title = str(b.get("title") or "document")
            if source.get("type") == "text":
                texts.append(f"--- {title} ---\n{source.get('data', '')}\n--- end of {title} ---")
            else:
                texts.append(PDF_OMITTED.format(title=title))
    text = "\n\n".join(t for t in texts if t)
    if not images:
        return text
    return [*([{"type": "text", "text": text}] if text else []), *images]


IMAGES_OMITTED = ("[{n} image{s} omitted: Tebiki sends tool results to OpenAI-compatible "
                  "endpoints as text only]")


def _result_text(content: Any) -> str:
    """A tool_result's content as the text a ``role: tool`` message carries: its text parts,
    and a note for the images chat-completions tool messages cannot hold."""
    if not isinstance(content, list):
        return str(content)
    parts = [p for p in content if isinstance(p, dict)]
    text = "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")
    n = sum(1 for p in parts if p.get("type") == "image")
    if n:
        note = IMAGES_OMITTED.format(n=n, s="s" if n != 1 else "")
        text = f"{text}\n\n{note}" if text else note
    return text
