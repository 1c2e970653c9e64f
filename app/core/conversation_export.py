"""A stored conversation as Markdown, for "Export as Markdown…".

What the person and the model said, in order: the text of each turn, each tool call as its
name and input (fenced JSON) and its result shortened to a summary. Thinking is left out (it
is the model's scratch work, often summarised or redacted, and not part of the exchange).
Pure: no Qt, no files; the stored JSON is taken as it is and anything malformed in it is
shown as such, never raised.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from app.core.agent.compaction import marker_of
from app.core.permissions.egress import SecretMatcher
from app.core.store.conversations import Conversation, StoredMessage

# A result longer than this is cut: the export is for reading, the full output is in History.
RESULT_MAX_LINES = 40
RESULT_MAX_CHARS = 4000
_SKIPPED = frozenset({"thinking", "redacted_thinking"})
_BACKTICKS = re.compile(r"`+")


def conversation_markdown(conversation: Conversation,
                          messages: Sequence[StoredMessage]) -> str:
    """The whole conversation as one Markdown document (ends with a newline)."""
    title = conversation.title.strip() or f"Conversation {conversation.id}"
    parts = [f"# {_one_line(title)}", _details(conversation)]
    tool_names: dict[str, str] = {}
    for message in messages:
        if marker_of(message.content) is not None:
            # The summary that replaced the earlier history for the model; the messages
            # before it are still stored and exported above.
            parts.append("*[The conversation was compacted here: the model was given a "
                         "summary of everything above instead of the messages themselves.]*")
            continue
        blocks = _blocks(message.content)
        if message.role == "user":
            texts = [b for b in blocks if b.get("type") != "tool_result"]
            results = [b for b in blocks if b.get("type") == "tool_result"]
            # Tool results travel in user turns; they read as the end of the model's call.
            parts.extend(_result(b, tool_names) for b in results)
            body = [p for p in (_block(b, tool_names) for b in texts) if p]
            if body:
                parts.append("## You")
                parts.extend(body)
        else:
            body = [p for p in (_block(b, tool_names) for b in blocks) if p]
            if body:
                parts.append("## Assistant")
                parts.extend(body)
    return "\n\n".join(parts) + "\n"


REDACTED = "[secret redacted]"


def redact_secrets(text: str, matchers: Sequence[SecretMatcher] = ()) -> tuple[str, int]:
    """``text`` with every secret replaced by ``[secret redacted]``, and how many there were.

    Always the well-known token formats (API keys, private keys, JWTs); and the values each of
    ``matchers`` learnt (the conversation's secret index: what it read from sensitive files;
    the machine's known secrets). An exported file leaves the app's walls: nothing secret in it.
    """
    spans = [(hit.start, hit.end) for matcher in (*matchers, SecretMatcher())
             for hit in matcher.scan(text)]
    if not spans:
        return text, 0
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, last = [], 0
    for start, end in merged:
        out += [text[last:start], REDACTED]
        last = end
    out.append(text[last:])
    return "".join(out), len(merged)


def redacted_markdown(conversation: Conversation, messages: Sequence[StoredMessage],
                      matchers: Sequence[SecretMatcher] = ()) -> tuple[str, int]:
    """``conversation_markdown`` with its secrets redacted (see ``redact_secrets``)."""
    return redact_secrets(conversation_markdown(conversation, messages), matchers)


def export_folder(home: Path | None = None) -> Path:
    """Where the save dialog starts: Documents (else home), never the project folder, which
    a commit or a sync could publish."""
    home = home if home is not None else Path.home()
    documents = home / "Documents"
    return documents if documents.is_dir() else home


def suggested_filename(conversation: Conversation) -> str:
    """A file name for the export: the title's words (ASCII letters, digits) and ``.md``."""
    words = re.findall(r"[A-Za-z0-9]+", conversation.title)[:8]
    stem = "-".join(words).lower()[:60].strip("-")
    return f"{stem or f'conversation-{conversation.id}'}.md"


def _details(conversation: Conversation) -> str:
    bits = []
    if conversation.project_root:
        bits.append(f"Project: `{_one_line(conversation.project_root)}`")
    bits.append(f"Started: {_when(conversation.created_at)}")
    bits.append(f"Updated: {_when(conversation.updated_at)}")
    return " · ".join(bits)


def _when(stamp: str) -> str:
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    zone = " UTC" if moment.utcoffset() == timedelta(0) else ""
    return moment.strftime("%Y-%m-%d %H:%M") + zone


def _blocks(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return [{"type": "unreadable", "value": content}]
    return [b if isinstance(b, dict) else {"type": "unreadable", "value": b} for b in content]


def _block(block: dict[str, Any], tool_names: dict[str, str]) -> str:
    kind = block.get("type")
    if kind in _SKIPPED:
        return ""
    if kind == "text":
        text = block.get("text")
        return text.strip() if isinstance(text, str) else _unreadable(block)
    if kind == "tool_use":
        name = str(block.get("name") or "tool")
        if isinstance(block.get("id"), str):
            tool_names[block["id"]] = name
        return f"**Tool call:** `{_one_line(name)}`\n\n" + _fenced(_json(block.get("input")),
                                                                   "json")
    if kind == "tool_result":  # in an assistant turn only if the stored JSON is odd
        return _result(block, tool_names)
    if kind in ("image", "document"):
        return f"*[{kind} attached]*"
    return _unreadable(block)


def _result(block: dict[str, Any], tool_names: dict[str, str]) -> str:
    name = tool_names.get(str(block.get("tool_use_id")), "")
    label = f"**Result of** `{_one_line(name)}`" if name else "**Result**"
    if block.get("is_error") is True:
        label += " (error)"
    text = _summary(_result_text(block.get("content")))
    return f"{label}\n\n" + _fenced(text or "(no output)", "text")


def _result_text(content: object) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for item in content:
            if isinstance(item, dict) and item.get("type") == "text":
                pieces.append(str(item.get("text", "")))
            elif isinstance(item, dict) and item.get("type") in ("image", "document"):
                pieces.append(f"[{item['type']}]")
            else:
                pieces.append(_json(item))
        return "\n".join(pieces)
    return _json(content)


def _summary(text: str) -> str:
    text = text.strip("\n")
    lines = text.splitlines()
    cut = lines[:RESULT_MAX_LINES]
    shown = "\n".join(cut)
    if len(shown) > RESULT_MAX_CHARS:
        shown = shown[:RESULT_MAX_CHARS]
    hidden = len(text) - len(shown)
    if hidden > 0:
        more = len(lines) - len(cut)
        shown += (f"\n… ({more} more lines)" if more > 0
                  else f"\n… ({hidden} more characters)")
    return shown


def _fenced(text: str, language: str) -> str:
    """``text`` in a code fence longer than any run of backticks inside it (CommonMark: a
    fence closes only on a run at least as long), so the content cannot end it early."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=repr)


def _unreadable(block: object) -> str:
    return "*[unreadable content]*\n\n" + _fenced(_json(block), "json")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())
