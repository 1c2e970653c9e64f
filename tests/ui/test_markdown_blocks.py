"""A message keeps every block of its Markdown, in any order: a list after a list (of either
kind), paragraphs, headings, code, quotes, tables and rules, rendered whole or streamed."""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtGui import QTextBlock, QTextBlockFormat, QTextCursor, QTextDocument

from app.ui.widgets.markdown_stream import MarkdownStream
from app.ui.widgets.transcript_view import MessageView

BLOCKS = {
    "paragraph": "Some *para* text.",
    "heading": "## A `heading`",
    "bullets": "- b1\n- b2",
    "numbers": "1. o1\n2. o2",
    "tasks": "- [ ] t1\n- [x] t2",
    "code": "```py\nx = 1\n```",
    "quote": "> q1\n> q2",
    "nested quote": "> outer\n>> inner",
    "table": "| a | b |\n|---|---|\n| 1 | 2 |",
    "rule": "---",
}
_CODE = QTextBlockFormat.Property.BlockCodeFence
_QUOTE_LEVEL = QTextBlockFormat.Property.BlockQuoteLevel
# Qt's reader turns "---", blank, "---" into one block: not something a message relies on.
PAIRS = [pair for pair in itertools.product(BLOCKS, repeat=2) if pair != ("rule", "rule")]


def _blocks(document: QTextDocument) -> list[tuple[str, int, bool, object, int, int]]:
    """(text, heading level, code, list style, items in its list, quote level) of each block.
    An empty line inside a table cell is left out: Qt's reader puts one into the first cell
    of a table that follows a quote or code (a quirk the streamed rendering does not copy)."""
    return [_describe(block) for block in _iter(document)
            if block.text() or QTextCursor(block).currentTable() is None]


def _describe(block: QTextBlock) -> tuple[str, int, bool, object, int, int]:
    fmt, text_list = block.blockFormat(), block.textList()
    return (block.text(), fmt.headingLevel(), fmt.hasProperty(_CODE),
            text_list.format().style() if text_list else None,
            text_list.count() if text_list else 0, int(fmt.property(_QUOTE_LEVEL) or 0))


def _reference(text: str) -> QTextDocument:
    document = QTextDocument()
    document.setMarkdown(text)
    return document


def _streamed(text: str, step: int) -> QTextDocument:
    document = QTextDocument()
    stream = MarkdownStream(document)
    for end in range(step, len(text) + step, step):
        stream.render(text[:end])
    return document


def test_an_ordered_list_then_a_bullet_list_stay_two_lists(qtbot):
    text = "Steps:\n\n1. Stage the files.\n2. Run `git commit`.\n\n- a bullet\n- another\n"
    view = MessageView(text)
    qtbot.addWidget(view)
    assert view.toPlainText().splitlines() == [
        "Steps:", "Stage the files.", "Run git commit.", "a bullet", "another"]
    assert _blocks(view.document()) == _blocks(_reference(text))


@pytest.mark.parametrize(("first", "second"), PAIRS)
def test_any_two_blocks_keep_their_blocks(qtbot, first, second):
    text = f"{BLOCKS[first]}\n\n{BLOCKS[second]}\n"
    expected = _blocks(_reference(text))
    for step in (len(text), 1, 6):  # whole (a reloaded message), then streamed
        assert _blocks(_streamed(text, step)) == expected, step


def test_a_loose_ordered_list_counts_on_across_its_blank_lines(qtbot):
    text = "1. first\n\n   more about it\n\n1. second\n\n1. third\n"
    for step in (len(text), 1):
        document = _streamed(text, step)
        numbered = [(b.text(), b.textList().itemText(b)) for b in _iter(document)
                    if b.textList() is not None]
        assert numbered == [("first", "1."), ("second", "2."), ("third", "3.")], step


def _iter(document: QTextDocument):
    block = document.begin()
    while block.isValid():
        yield block
        block = block.next()
