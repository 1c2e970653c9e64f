"""Find in the part of a stored conversation that is not built yet (conversation_pager shows a
long conversation's end and pages earlier messages in on request).

What is searched is what the message views would show once built: every text block of a stored
user or assistant message becomes one ``MessageView`` when replayed (conversation_replay), so
each is rendered here the same way (``MarkdownStream`` into a ``QTextDocument``) and its blocks'
text is kept. Counting then matches ``QTextDocument.find`` on a built view: case-insensitive,
within a block, non-overlapping, a no-break space read as a space. Never the stored JSON: a
word must not match a block type or a tool input the transcript does not show as text.

Both steps block (rendering costs about half a millisecond a message): they run in a worker
thread, on plain data (``StoredConversation`` and strings); the documents they make live and
die in that thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtGui import QTextDocument

from app.ui.widgets.conversation_replay import StoredConversation
from app.ui.widgets.markdown_stream import MarkdownStream


@dataclass(frozen=True)
class ShownText:
    """The text one message view shows (lower-cased for matching), and which stored message
    it belongs to."""

    message: int  # index in ``StoredConversation.messages``
    text: str


def _text_blocks(content: Any) -> list[str]:
    """The text blocks replay builds a message view for, in order (as replay_messages)."""
    if not isinstance(content, list):
        return [content] if isinstance(content, str) and content else []
    return [block["text"] for block in content
            if isinstance(block, dict) and block.get("type") == "text" and block.get("text")]


def rendered_text(markdown: str) -> str:
    """What a message view built from ``markdown`` shows, one line per document block."""
    document = QTextDocument()
    MarkdownStream(document).render(markdown)
    lines: list[str] = []
    block = document.begin()
    while block.isValid():
        lines.append(block.text().replace("\xa0", " "))  # as QTextDocument.find reads it
        block = block.next()
    return "\n".join(lines)


def shown_texts(stored: StoredConversation) -> list[ShownText]:
    """Every message view ``stored`` replays into, top to bottom (blocking: renders)."""
    return [ShownText(index, rendered_text(str(text)).lower())
            for index, message in enumerate(stored.messages)
            for text in _text_blocks(message.content)]


def count_matches(texts: Sequence[ShownText], query: str) -> list[int]:
    """How many times ``query`` occurs in each of ``texts`` (as a view's find would count)."""
    needle = query.lower()
    if not needle or "\n" in needle:
        return [0] * len(texts)
    return [shown.text.count(needle) for shown in texts]
