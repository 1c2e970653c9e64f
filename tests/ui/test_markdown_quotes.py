"""Block quotes read as quotes: indented a step a level, quieter text, and a bar left of each
level (nested quotes get two), readable on light and dark palettes."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QTextBlock

from app.ui.contrast import contrast_ratio
from app.ui.widgets.markdown_style import QUOTE_INDENT_PX, quote_colors
from app.ui.widgets.quote_bars import QUOTE_BAR_PX
from app.ui.widgets.transcript_view import MessageView
from tests.ui.palettes import application_palette

TEXT = ("Before.\n\n> A quoted line.\n> More of it.\n>\n>> A nested reply.\n\n"
        "After the quote.\n")


def _block(view: MessageView, text: str) -> QTextBlock:
    block = view.document().begin()
    while block.isValid() and block.text() != text:
        block = block.next()
    assert block.isValid(), text
    return block


def _shown(qtbot, text: str) -> MessageView:
    view = MessageView("")
    qtbot.addWidget(view)
    view.resize(480, 10)
    view.set_markdown(text)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_quoted_blocks_are_indented_by_level_and_muted(qtbot):
    view = _shown(qtbot, TEXT)
    muted, _bar = quote_colors()
    for text, level in (("A quoted line. More of it.", 1), ("A nested reply.", 2)):
        block = _block(view, text)
        assert block.blockFormat().leftMargin() == QUOTE_INDENT_PX * level
        assert block.begin().fragment().charFormat().foreground().color() == muted
    after = _block(view, "After the quote.")
    assert after.blockFormat().leftMargin() == 0
    assert after.begin().fragment().charFormat().foreground().color() != muted


def _bar_pixels(view: MessageView, block: QTextBlock) -> list[str]:
    """The colour (#rrggbb) at the middle of each level's bar position, beside ``block``."""
    image = view.viewport().grab().toImage()
    rect = view.document().documentLayout().blockBoundingRect(block)
    y = int(rect.center().y())
    return [image.pixelColor(int(rect.left() + depth * QUOTE_INDENT_PX + 2 + QUOTE_BAR_PX / 2),
                             y).name() for depth in range(2)]


def test_a_bar_is_drawn_left_of_each_quote_level(qtbot):
    view = _shown(qtbot, TEXT)
    _muted, bar_color = quote_colors()
    bar = bar_color.name()
    assert _bar_pixels(view, _block(view, "A quoted line. More of it."))[0] == bar
    assert _bar_pixels(view, _block(view, "A nested reply.")) == [bar, bar]
    assert bar not in _bar_pixels(view, _block(view, "After the quote."))
    assert bar not in _bar_pixels(view, _block(view, "Before."))


def test_a_streamed_quote_is_drawn_the_same(qtbot):
    view = _shown(qtbot, "")
    for end in range(3, len(TEXT) + 3, 3):
        view.append(TEXT[end - 3:end])
        view.render_markdown()
    muted, bar_color = quote_colors()
    bar = bar_color.name()
    nested = _block(view, "A nested reply.")
    assert nested.blockFormat().leftMargin() == 2 * QUOTE_INDENT_PX
    assert nested.begin().fragment().charFormat().foreground().color() == muted
    assert _bar_pixels(view, nested) == [bar, bar]


@pytest.mark.parametrize(("base", "text"), [("#ffffff", "#000000"), ("#1e1e1e", "#eeeeee"),
                                            ("#fafafa", "#333333"), ("#2b2b2b", "#d0d0d0")])
def test_quote_colours_are_readable_on_light_and_dark_palettes(qtbot, base, text):
    base_color, text_color = QColor(base), QColor(text)
    with application_palette(base, text):  # the app's dark or light mode
        muted, bar = quote_colors()
        assert contrast_ratio(muted, base_color) >= 4.5  # WCAG AA for body text
        assert contrast_ratio(muted, base_color) < contrast_ratio(text_color, base_color)
        assert contrast_ratio(bar, base_color) >= 1.5  # the bar is seen
        view = _shown(qtbot, TEXT)
        nested = _block(view, "A nested reply.")
        assert nested.begin().fragment().charFormat().foreground().color() == muted
        assert _bar_pixels(view, nested) == [bar.name(), bar.name()]
