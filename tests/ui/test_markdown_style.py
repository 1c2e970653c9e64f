"""Rendered messages: a heading keeps its size and weight across inline code, emphasis and
links; code blocks and code spans have a palette-derived background; the copy is unchanged."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPalette, QTextBlock, QTextFormat

from app.ui.widgets.markdown_style import code_colors
from app.ui.widgets.message_actions import code_blocks
from app.ui.widgets.transcript_view import MessageView

HEADING = "## How `parse_date` reads *a* [date](http://127.0.0.1/doc) **now**"


def _blocks(view: MessageView) -> list[QTextBlock]:
    blocks, block = [], view.document().begin()
    while block.isValid():
        blocks.append(block)
        block = block.next()
    return blocks


def _fragments(block: QTextBlock):
    it = block.begin()
    while not it.atEnd():
        if it.fragment().isValid():
            yield it.fragment()
        it += 1


def _assert_heading(view: MessageView, level: int, text: str) -> None:
    heading = next(b for b in _blocks(view) if b.blockFormat().headingLevel() == level)
    assert heading.text() == text
    fragments = list(_fragments(heading))
    assert len(fragments) > 1
    for fragment in fragments:
        char_format = fragment.charFormat()
        assert char_format.property(QTextFormat.Property.FontSizeAdjustment) == 4 - level, \
            fragment.text()
        assert char_format.fontWeight() == QFont.Weight.Bold, fragment.text()
        assert not char_format.hasProperty(QTextFormat.Property.FontPointSize), fragment.text()
    code = next(f for f in fragments if f.text() == "parse_date")
    assert code.charFormat().fontFixedPitch()  # still monospace
    assert any(f.charFormat().fontItalic() for f in fragments)  # emphasis kept
    assert any(f.charFormat().isAnchor() for f in fragments)  # link kept


def test_inline_spans_keep_the_heading_format(qtbot):
    view = MessageView(HEADING + "\n\nBody text.")
    qtbot.addWidget(view)
    _assert_heading(view, 2, "How parse_date reads a date now")
    body = next(b for b in _blocks(view) if b.text() == "Body text.")
    assert body.begin().fragment().charFormat().fontWeight() != QFont.Weight.Bold


def test_headings_keep_their_format_while_streaming(qtbot):
    """Frozen parts, the tail and a heading after a long paragraph cut in two."""
    view = MessageView("")
    qtbot.addWidget(view)
    long_paragraph = " ".join(f"word{i}" for i in range(600))
    text = f"{HEADING}\n\n{long_paragraph}\n\n### Then `x` and *y*\n\nEnd."
    for end in range(40, len(text) + 40, 40):
        view.append(text[end - 40:end])
        view.render_markdown()
    _assert_heading(view, 2, "How parse_date reads a date now")
    level3 = next(b for b in _blocks(view) if b.blockFormat().headingLevel() == 3)
    assert {f.charFormat().property(QTextFormat.Property.FontSizeAdjustment)
            for f in _fragments(level3)} == {1}


def test_code_blocks_and_spans_have_a_background(qtbot):
    source = ("Call `parse_date` first.\n\n```python\nx = 1\n\ty = 2  \n```\n\n"
              "After the code.")
    view = MessageView(source)
    qtbot.addWidget(view)
    block_background, inline_background = code_colors()
    code_lines = [b for b in _blocks(view)
                  if b.blockFormat().hasProperty(QTextFormat.Property.BlockCodeFence)]
    assert [b.text().strip() for b in code_lines] == ["x = 1", "y = 2"]
    for block in code_lines:
        block_format = block.blockFormat()
        assert block_format.background().style() != Qt.BrushStyle.NoBrush
        assert block_format.background().color() == block_background
        assert block_format.leftMargin() > 0
        for fragment in _fragments(block):
            assert fragment.charFormat().fontFixedPitch()
    for block in _blocks(view):
        if block.text() == "After the code.":
            assert block.blockFormat().background().style() == Qt.BrushStyle.NoBrush
    span = next(f for b in _blocks(view) for f in _fragments(b) if f.text() == "parse_date")
    assert span.charFormat().background().color() == inline_background
    # Copying a code block still gives exactly the source inside the fence.
    assert code_blocks(view.markdown)[0].body == "x = 1\n\ty = 2  "


def _palette(base: str, alternate: str, text: str) -> QPalette:
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Base, QColor(base))
    palette.setColor(QPalette.ColorRole.AlternateBase, QColor(alternate))
    palette.setColor(QPalette.ColorRole.Text, QColor(text))
    return palette


def test_code_colors_follow_the_palette():
    light_block, light_inline = code_colors(_palette("#ffffff", "#f7f7f7", "#000000"))
    dark_block, dark_inline = code_colors(_palette("#1e1e1e", "#2a2a2a", "#eeeeee"))
    assert light_block.lightness() < QColor("#f7f7f7").lightness()  # darker on light
    assert dark_block.lightness() > QColor("#2a2a2a").lightness()  # lighter on dark
    assert light_inline.lightness() > light_block.lightness()  # spans: lighter than blocks
    assert dark_inline.lightness() < dark_block.lightness()
