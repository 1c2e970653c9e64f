"""The Messages API request body: the transcript as JSON bytes, with prompt-cache breakpoints,
thinking and effort.

``request_body`` marks prompt-cache breakpoints (the last tool, the system prompt, the
transcript's end and the previous request's end: four, the API's limit) so a tool loop reads
its prefix from the cache, and sends adaptive thinking and effort when the request asks. Kept
apart from the transport (``anthropic``): what is sent is decided here, how it travels there.
"""

from __future__ import annotations

import json
from typing import Any

from app.core.agent.models.base import EFFORTS, THINKING_DISPLAYS, ModelRequest

DEFAULT_TEMPERATURE = 1.0


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
