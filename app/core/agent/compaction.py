"""Compaction: when a conversation fills the model's context window, one summary request
replaces the history sent to the model from then on.

What is stored: nothing is deleted. A marker message (role ``user``, one block of type
``tebiki_compaction`` holding the summary and ``through``, the id of the last stored message
it covers) is appended; on reload, ``effective_messages`` sends the summary plus the messages
after ``through``, never the whole history. The transcript the person sees is unchanged (the
replay shows only text, thinking and tool blocks, so the marker stays invisible), and the
marker never reaches the API (it is turned into a text block here).

The summary request is one request without tools: the history is rendered as plain text
(``transcript_as_text``), so a transcript with tool calls, thinking blocks or huge tool
results can always be sent; when even that is too long, tool results and long texts are cut
harder and it is sent once more.

A person's prompt that the model has not answered yet (the request that failed with a
context-length error) is not summarised: it stays after the summary, so Retry sends it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.agent.models import ModelProvider, ModelRequest, ModelTurn, ProviderError
from app.core.agent.transcript import Message, normalize
from app.core.store.conversations import StoredMessage

if TYPE_CHECKING:
    from app.core.store.conversations import ConversationRepository

MARKER_TYPE = "tebiki_compaction"
# Offer compaction from this share of the context window on.
COMPACT_THRESHOLD = 0.8
# Context windows by model-name prefix; the first match wins. Anthropic's current models take
# 200k tokens by default; an unknown (OpenAI-compatible) model is assumed to take 128k.
CONTEXT_WINDOWS: tuple[tuple[str, int], ...] = (
    ("claude", 200_000),
    ("gpt-4.1", 1_000_000),
    ("gpt-4o", 128_000),
)
DEFAULT_CONTEXT_WINDOW = 128_000
SUMMARY_MAX_TOKENS = 4096
SUMMARY_INTRO = ("[The earlier part of this conversation was compacted to fit the context "
                 "window. Summary of everything before this point:]\n\n")
SUMMARY_SYSTEM = ("You summarise a conversation between a person and an AI coding agent so "
                  "that the agent can continue the work from the summary alone.")
SUMMARY_INSTRUCTION = (
    "Summarise the conversation above so the work can continue without it. Keep: the "
    "person's goals and requests, decisions and constraints they stated, what was done (files "
    "read, created or changed, commands run and their outcome), open questions and what is "
    "left to do. Quote exact file paths, names and error messages. Plain text or Markdown; "
    "no preamble.")
# Phrases with which the APIs reject a request that does not fit the context window.
_OVERFLOW = re.compile(
    r"prompt is too long|context[ _-]?(length|window)|maximum context|too many (input )?tokens"
    r"|request_too_large|request exceeds the maximum|input is too long", re.IGNORECASE)
# Characters kept per tool result / text block in the summary request (then, on overflow, in
# the second attempt).
_CUTS = (20_000, 2_000)


class CompactionError(Exception):
    """Compaction could not be done; ``message`` is for the person."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class CompactionResult:
    summary: str
    summarised: int        # stored messages the summary replaces (this time)
    summary_tokens: int    # the summary's size, the new start of the context


def context_window(model: str) -> int:
    name = model.lower()
    for prefix, tokens in CONTEXT_WINDOWS:
        if name.startswith(prefix):
            return tokens
    return DEFAULT_CONTEXT_WINDOW


def is_context_overflow(message: str) -> bool:
    """Whether an API error message says the request did not fit the context window."""
    return bool(_OVERFLOW.search(message or ""))


def stored_context(conversations: ConversationRepository, conversation_id: int
                   ) -> tuple[str, int, bool] | None:
    """(model, tokens, estimated) for a reopened conversation's context bar: the last
    request's input, or, when the conversation was compacted since, the summary's estimated
    size (about four characters a token). None when no request was recorded. Blocking."""
    last = conversations.last_request_usage(conversation_id)
    if last is None:
        return None
    model, usage = last
    stored = conversations.messages(conversation_id)
    marker = marker_of(stored[-1].content) if stored else None
    if marker is not None:
        return model, len(str(marker.get("summary", ""))) // 4, True
    return model, usage.input_tokens + usage.cache_write_tokens + usage.cache_read_tokens, False


# -- the stored record -----------------------------------------------------------------------


def marker_content(summary: str, through: int) -> list[dict[str, Any]]:
    return [{"type": MARKER_TYPE, "summary": summary, "through": through}]


def marker_of(content: object) -> dict[str, Any] | None:
    """The compaction marker block of a stored message's content, or None."""
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) \
            and content[0].get("type") == MARKER_TYPE:
        return content[0]
    return None


def summary_message(summary: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": SUMMARY_INTRO + summary}]}


def effective_messages(stored: Sequence[StoredMessage]) -> list[Message]:
    """What the model is sent for ``stored`` (not yet normalised): after the last compaction
    marker, its summary and the messages it does not cover; else every message."""
    last: dict[str, Any] | None = None
    for message in stored:
        last = marker_of(message.content) or last
    out: list[Message] = []
    through = -1
    if last is not None:
        out.append(summary_message(str(last.get("summary", ""))))
        through = int(last.get("through", -1))
    out += [{"role": m.role, "content": m.content} for m in stored
            if m.id > through and marker_of(m.content) is None]
    return out


def _is_pending_prompt(message: StoredMessage) -> bool:
    """A person's message with no tool results: after a failed request, not answered yet."""
    if message.role != "user" or marker_of(message.content) is not None:
        return False
    blocks = message.content if isinstance(message.content, list) else []
    return not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)


@dataclass(frozen=True)
class CompactionPlan:
    summarised: list[Message]      # what the summary request renders (normalised)
    through: int                   # the last stored message id the summary covers
    kept: list[Message]            # sent after the summary (an unanswered prompt)
    count: int                     # stored messages newly covered


def plan_compaction(stored: Sequence[StoredMessage]) -> CompactionPlan:
    """Which messages a compaction summarises; CompactionError when there is nothing new."""
    rows = [m for m in stored if marker_of(m.content) is None]
    last_marker = next((marker_of(m.content) for m in reversed(stored)
                        if marker_of(m.content) is not None), None)
    through_before = int(last_marker.get("through", -1)) if last_marker else -1
    live = [m for m in rows if m.id > through_before]
    split = len(live)
    while split > 0 and _is_pending_prompt(live[split - 1]):
        split -= 1
    covered, kept = live[:split], live[split:]
    if not covered:
        raise CompactionError("There is nothing new to compact in this conversation.")
    prefix = [summary_message(str(last_marker.get("summary", "")))] if last_marker else []
    summarised = normalize(prefix + [{"role": m.role, "content": m.content} for m in covered])
    return CompactionPlan(summarised, covered[-1].id,
                          [{"role": m.role, "content": m.content} for m in kept], len(covered))


# -- the summary request -------------------------------------------------------------------------


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… {len(text) - limit} more characters cut]"


def _block_text(block: dict[str, Any], limit: int) -> str:
    kind = block.get("type")
    if kind == "text":
        return _cut(str(block.get("text", "")), limit)
    if kind == "tool_use":
        raw = json.dumps(block.get("input"), ensure_ascii=False)
        return f"[tool call {block.get('name')}: {_cut(raw, limit)}]"
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
        error = " (error)" if block.get("is_error") else ""
        return f"[tool result{error}: {_cut(str(content), limit)}]"
    if kind in ("image", "document"):
        return f"[{kind} attached]"
    return ""  # thinking is the model's own scratch work, not part of the record


def transcript_as_text(messages: Sequence[Message], limit: int = _CUTS[0]) -> str:
    """The conversation as plain text, each block cut to ``limit`` characters."""
    parts = []
    for message in messages:
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        text = "\n".join(t for t in (_block_text(b, limit) for b in blocks
                                     if isinstance(b, dict)) if t)
        if text:
            who = "Person" if message["role"] == "user" else "Agent"
            parts.append(f"## {who}\n{text}")
    return "\n\n".join(parts)


def summary_request(model: str, messages: Sequence[Message], limit: int,
                    max_tokens: int) -> ModelRequest:
    body = (f"<conversation>\n{transcript_as_text(messages, limit)}\n</conversation>\n\n"
            + SUMMARY_INSTRUCTION)
    return ModelRequest(model=model, max_tokens=min(max_tokens, SUMMARY_MAX_TOKENS),
                        system=SUMMARY_SYSTEM, cache=False,
                        messages=[{"role": "user", "content": [{"type": "text",
                                                                 "text": body}]}])


def _discard(_text: str) -> None:
    """The summary is not shown while it streams."""


async def request_summary(provider: ModelProvider, model: str, messages: Sequence[Message],
                          max_tokens: int) -> ModelTurn:
    """One summary request; a second with harder cuts if the first does not fit."""
    for attempt, limit in enumerate(_CUTS):
        try:
            return await provider.stream(summary_request(model, messages, limit, max_tokens),
                                         _discard)
        except ProviderError as exc:
            if attempt + 1 < len(_CUTS) and is_context_overflow(exc.message):
                continue
            raise CompactionError(f"The summary request failed: {exc.message}") from exc
    raise AssertionError("unreachable")


def summary_text(turn: ModelTurn) -> str:
    return "\n".join(str(b.get("text", "")) for b in turn.content
                     if b.get("type") == "text").strip()


__all__ = [
    "COMPACT_THRESHOLD",
    "CompactionError",
    "CompactionResult",
    "context_window",
    "effective_messages",
    "is_context_overflow",
    "plan_compaction",
]
