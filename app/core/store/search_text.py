"""What of a stored message the full-text index holds: the words people and tools wrote.

A message is stored as JSON content blocks (``[{"type": "text", "text": ...}, {"type":
"tool_use", "name": ..., "input": {...}}, ...]``). Indexing that JSON text made every block
type and key ("type", "text", "tool_use", "input") match every conversation, and would index
thinking signatures and base64 attachments. ``searchable_text`` keeps only what someone can
mean to find: text blocks, tool names, the string values of tool inputs, tool result text and
document titles. Tool inputs and results are bounded (a written file or a fetched page must not
bloat the index), and long unbroken base64-like runs are dropped wherever they appear.

Pure and Qt-free: the repository calls it on every append and migration 11 on every stored
message. It never raises: content read back from an old or hand-edited database may be any
JSON.
"""

from __future__ import annotations

import re
from typing import Any

# Per tool input string value and per tool result: enough for every word a person looks for
# in a command, a path or a result summary, not a whole written file or fetched page.
MAX_TOOL_TEXT = 20_000
# 200+ characters with no space or punctuation besides base64's own is encoded data (an image,
# a key, a hash list), never a word anyone searches for. Long words and URLs (which contain
# ``:`` and ``.``) stay.
_ENCODED_RUN = re.compile(r"[A-Za-z0-9+/=_-]{200,}")
# Nested tool inputs deeper than this are not walked (a hostile or broken input must not
# cost unbounded time); real tool inputs are a few levels deep.
_MAX_DEPTH = 32


def _clean(text: str) -> str:
    # Only a text with a 200+ character "word" can hold such a run; finding the longest word
    # is several times cheaper than running the pattern over ordinary prose.
    if len(text) < 200 or max(map(len, text.split()), default=0) < 200:
        return text
    return _ENCODED_RUN.sub(" ", text)


def _bounded(text: str) -> str:
    return _clean(text[:MAX_TOOL_TEXT])


def _string_values(value: Any) -> list[str]:
    """The string values inside a tool input (never its keys), depth first, iteratively."""
    found: list[str] = []
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            found.append(_bounded(item))
        elif depth >= _MAX_DEPTH:
            continue
        elif isinstance(item, dict):
            stack.extend((v, depth + 1) for v in reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in reversed(item))
    return found


def _tool_result_text(content: Any) -> str:
    """A tool result's text: a string, or its text (and document title) blocks; images and
    other data are skipped. Bounded as a whole."""
    if isinstance(content, str):
        return _bounded(content)
    parts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                parts.extend(_block_text(block, in_result=True))
    return _bounded("\n".join(parts))


def _block_text(block: dict[str, Any], *, in_result: bool = False) -> list[str]:
    kind = block.get("type")
    if kind == "tool_use":
        name = block.get("name")
        return [*([name] if isinstance(name, str) else []),
                *_string_values(block.get("input"))]
    if kind == "tool_result" and not in_result:
        return [_tool_result_text(block.get("content"))]
    if kind == "document":
        # Its title, and a plain-text document's text (bounded); never a PDF's base64.
        parts = [block[k] for k in ("title", "context") if isinstance(block.get(k), str)]
        source = block.get("source")
        if isinstance(source, dict) and source.get("type") == "text" \
                and isinstance(source.get("data"), str):
            parts.append(_bounded(source["data"]))
        return parts
    if kind in ("thinking", "redacted_thinking", "image"):
        # The model's hidden reasoning and its signature, encrypted reasoning, attachments.
        return []
    # Text blocks, and the text of any block type this version does not know.
    text = block.get("text")
    return [_clean(text)] if isinstance(text, str) else []


def searchable_text(content: Any) -> str:
    """The words of a message's ``content`` (a string or a list of content blocks) to index,
    one block per line; "" when it has none."""
    if isinstance(content, str):
        return _clean(content)
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(_clean(block))
        elif isinstance(block, dict):
            parts.extend(_block_text(block))
    return "\n".join(p for p in parts if p)
