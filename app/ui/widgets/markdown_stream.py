"""Streaming Markdown without quadratic re-rendering.

Re-rendering a whole growing message on every tick costs O(length) each time (300 ms for a
10,000-token answer). Instead, finished parts are frozen: complete paragraphs, or for a very
long paragraph chunks cut at a line or word boundary, are rendered once into their own label,
and only a bounded tail is re-rendered while text streams in. A code fence cut in two is closed
at the end of the frozen part and re-opened in the tail, so both render as code.

``MarkdownStream`` puts the parts into one QTextDocument, each as its own blocks: a part is
rendered alone (``QTextDocument.setMarkdown``, the same reader as for the whole text) and its
blocks are appended after a new block, with the first block's format (heading, code, quote)
restored — inserting Markdown at one cursor would merge each part's first block into the
previous part's last ("check.**A heading**def fib…", "Run `git commit`.a bullet"). A list
right after a list continues it when Markdown would (a loose list cut at its blank lines), and
a blank line is not a cut while the next line goes on indented. Only the tail is replaced while
text streams in. A part cut in the middle of a long paragraph continues that paragraph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtGui import (
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
    QTextList,
)

from app.ui.widgets.code_colouring import CodeColouring
from app.ui.widgets.markdown_images import replace_images_with_text
from app.ui.widgets.markdown_style import polish_markdown_part

MAX_TAIL_CHARS = 1200


@dataclass
class SplitState:
    consumed: int = 0          # characters of the source already frozen
    open_fence: str | None = None  # the fence line open at ``consumed`` (re-opened in the tail)
    # The text at ``consumed`` continues a paragraph cut in two (a very long one), rather than
    # starting a new block.
    mid_paragraph: bool = False


def _fence_marker(line: str) -> str | None:
    stripped = line.lstrip()
    for marker in ("```", "~~~"):
        if stripped.startswith(marker):
            return stripped
    return None


def freeze_ready_blocks(source: str, state: SplitState,
                        max_tail: int = MAX_TAIL_CHARS) -> tuple[list[str], str]:
    """Advance ``state`` over ``source``; return (new frozen blocks, tail text to render)."""
    parts, tail = freeze_ready_parts(source, state, max_tail)
    return [text for text, _continues in parts], tail


_BLOCK_START = re.compile(r"\s{0,3}(#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s|>|\||```|~~~)")


def _ends_mid_paragraph(before: str) -> bool:
    """A cut after ``before`` fell inside a plain paragraph (not after a list item, heading,
    quote or table row, nor at a blank line)."""
    last_line = before.rstrip("\n").rpartition("\n")[2]
    return bool(last_line.strip()) and not before.endswith("\n\n") and \
        not _BLOCK_START.match(last_line)


def continues_paragraph(state_mid_paragraph: bool, text: str) -> bool:
    """Whether ``text`` (a part or the tail) goes on with the paragraph before it."""
    return state_mid_paragraph and not _BLOCK_START.match(text)


def freeze_ready_parts(source: str, state: SplitState, max_tail: int = MAX_TAIL_CHARS
                       ) -> tuple[list[tuple[str, bool]], str]:
    """``freeze_ready_blocks`` with, for each block, whether it continues the previous one's
    last paragraph (a long paragraph cut in two); ``state.mid_paragraph`` says the same of
    the tail."""
    frozen: list[tuple[str, bool]] = []
    while True:
        pending = source[state.consumed:]
        cut = _find_cut(pending, state.open_fence, max_tail)
        if cut is None:
            break
        length, fence_after = cut
        block = pending[:length]
        if state.open_fence:
            block = state.open_fence + "\n" + block
        if fence_after:
            block = block.rstrip("\n") + "\n" + fence_after[:3]  # close it for this block
        frozen.append((block, continues_paragraph(state.mid_paragraph, block)))
        state.consumed += length
        state.mid_paragraph = not state.open_fence and not fence_after and \
            _ends_mid_paragraph(pending[:length])
        state.open_fence = fence_after
    tail = source[state.consumed:]
    if state.open_fence:
        tail = state.open_fence + "\n" + tail
    return frozen, tail


def _find_cut(pending: str, fence: str | None, max_tail: int) -> tuple[int, str | None] | None:
    """Where the pending text can be frozen: (length, fence still open after it) or None."""
    position = 0
    last_line_cut: tuple[int, str | None] | None = None
    while True:
        newline = pending.find("\n", position)
        if newline < 0:
            break
        line = pending[position:newline]
        marker = _fence_marker(line)
        if marker is not None:
            fence = None if fence else marker
        end = newline + 1
        if fence is None and not line.strip() and end > 1 and \
                pending[end:end + 1] not in ("", " ", "\t"):
            # A blank line outside code, and the next line does not go on indented (a list
            # item's next paragraph, which rendered alone would leave its list): complete.
            return end, None
        last_line_cut = (end, fence)
        if end > max_tail:
            return last_line_cut
        position = end
    if len(pending) > 2 * max_tail:
        if last_line_cut is not None:
            return last_line_cut
        if fence is None:
            # One enormous line: cut at a word boundary so each render stays bounded.
            space = pending.rfind(" ", 0, max_tail)
            return (space + 1 if space > 0 else max_tail), None
    return None


def _render_alone(markdown: str) -> QTextDocument:
    part = QTextDocument()
    part.setMarkdown(markdown)
    replace_images_with_text(part)  # never loaded: no fetch, no local file read
    polish_markdown_part(part, markdown)  # headings with inline spans, code backgrounds
    return part


def _append_part(cursor: QTextCursor, markdown: str, *, continues: bool) -> None:
    """Append ``markdown``'s blocks at ``cursor`` (the end of the document): after a new
    block, or (``continues``) in the current one, a long paragraph cut in two."""
    if not markdown.strip():
        return
    document = cursor.document()
    at_start = cursor.position() == 0 and document.isEmpty()
    part = _render_alone(markdown)
    if continues and not at_start:
        cursor.insertText(" ")
        # What insertMarkdown does, with the part polished: its first block joins this one.
        cursor.insertFragment(QTextDocumentFragment(part))
        return
    first = part.begin()
    if not at_start:
        # A block of its own to insert into. The fragment either merges its first block into
        # it (a paragraph, heading, code, quote) or opens a block of its own (a list), and a
        # part that starts with a table or a rule begins with an empty block that only a
        # document's very first block has (setMarkdown of the whole text has none there).
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
    start = cursor.position()
    cursor.insertFragment(QTextDocumentFragment(part))
    fix = QTextCursor(document)
    fix.setPosition(start)
    inserted = fix.block()
    if not at_start and not inserted.text() and inserted.next().isValid():
        # Left empty (or the fragment's own empty first block): merged away into the block
        # before, which keeps its own format and text.
        fix.deletePreviousChar()
        inserted = fix.block().next()  # the cursor is now at the end of the block before
    elif _list_of(inserted) is None and _list_of(first) is None:
        fix.setBlockFormat(first.blockFormat())  # heading level, code, quote, margins
    _join_adjacent_list(inserted)


def _list_of(block: QTextBlock) -> QTextList | None:
    return block.textList()  # None outside a list (PySide's stubs leave that out)


def _join_adjacent_list(block: QTextBlock) -> None:
    """A list right after a list (a part cut at the blank line of a loose list) goes on with
    it when Markdown would: the same kind, level and delimiter, so "1. a\n\n1. b" counts on."""
    new_list = _list_of(block)
    if new_list is None:
        return
    style = new_list.format()
    previous = block.previous()
    # Back over the items before, their sub-lists and their indented paragraphs.
    while previous.isValid() and (_list_of(previous) is not None or
                                  previous.blockFormat().indent() >= style.indent()):
        earlier = _list_of(previous)
        if earlier is None:
            previous = previous.previous()
            continue
        earlier_format = earlier.format()
        if earlier_format.indent() < style.indent():
            return  # a sub-list of the item before: already where it belongs
        if earlier_format.indent() == style.indent():
            if earlier is new_list or earlier_format.style() != style.style() or \
                    earlier_format.numberSuffix() != style.numberSuffix():
                return
            # Every item, also those after a sub-list ("1. a\n   - sub\n2. b").
            for item in [new_list.item(index) for index in range(new_list.count())]:
                earlier.add(item)
            return
        previous = previous.previous()


class MarkdownStream:
    """A growing Markdown text in ``document``: finished parts appended once, each as its own
    blocks, and the bounded tail replaced on each ``render`` (see the module docstring)."""

    def __init__(self, document: QTextDocument) -> None:
        self.document = document
        # Syntax colours for fenced code, lexed in a worker and applied when ready.
        self.code_colouring = CodeColouring(document)
        self.state = SplitState()
        self.tail_start = 0  # where the tail's blocks begin (the end of the frozen parts)
        # The format of the block holding ``tail_start``: removing the tail merges its last
        # block into that one, which then takes the removed block's format (a list item, a
        # paragraph's margins); it is put back.
        self._end_format = QTextBlockFormat()

    def reset(self) -> None:
        self.code_colouring.reset()
        self.document.clear()
        self.state = SplitState()
        self.tail_start = 0
        self._end_format = QTextBlockFormat()

    def render(self, markdown: str) -> None:
        """Bring the document up to ``markdown`` (the whole text so far)."""
        parts, tail = freeze_ready_parts(markdown, self.state)
        cursor = QTextCursor(self.document)
        cursor.beginEditBlock()
        cursor.setPosition(self.tail_start)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        if cursor.hasSelection():
            cursor.removeSelectedText()
            cursor.setBlockFormat(self._end_format)
        self.code_colouring.forget_tail()
        frozen_from = self.tail_start
        for text, continues in parts:
            _append_part(cursor, text, continues=continues)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if parts:
            self.tail_start = cursor.position()
            self._end_format = cursor.blockFormat()
        _append_part(cursor, tail, continues=continues_paragraph(self.state.mid_paragraph, tail))
        cursor.endEditBlock()
        if any(_has_fence(text) for text, _continues in parts):
            self.code_colouring.colour(frozen_from, self.tail_start, tail=False)
        if _has_fence(tail):
            self.code_colouring.colour(self.tail_start, cursor.position(), tail=True)


def _has_fence(markdown: str) -> bool:
    return "```" in markdown or "~~~" in markdown
