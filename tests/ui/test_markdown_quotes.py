"""Block quotes read as quotes: indented a step a level, quieter text, and a bar left of each
level (nested quotes get two), readable on light and dark palettes."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QPalette, QTextBlock
from PySide6.QtWidgets import QApplication

from app.ui.widgets.markdown_style import QUOTE_INDENT_PX, quote_colors
from app.ui.widgets.quote_bars import QUOTE_BAR_PX
from app.ui.widgets.transcript_view import MessageView

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


def _luminance(color: QColor) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4
    return (0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF())
            + 0.0722 * channel(color.blueF()))


def _contrast(a: QColor, b: QColor) -> float:
    light, dark = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _palette(base: str, text: str) -> QPalette:
    palette = QPalette()
    for role, color in ((QPalette.ColorRole.Base, base), (QPalette.ColorRole.Window, base),
                        (QPalette.ColorRole.Text, text), (QPalette.ColorRole.WindowText, text)):
        palette.setColor(role, QColor(color))
    return palette


@pytest.mark.parametrize(("base", "text"), [("#ffffff", "#000000"), ("#1e1e1e", "#eeeeee"),
                                            ("#fafafa", "#333333"), ("#2b2b2b", "#d0d0d0")])
def test_quote_colours_are_readable_on_light_and_dark_palettes(qtbot, base, text):
    palette = _palette(base, text)
    muted, bar = quote_colors(palette)
    base_color, text_color = QColor(base), QColor(text)
    assert _contrast(muted, base_color) >= 4.5  # WCAG AA for body text
    assert _contrast(muted, base_color) < _contrast(text_color, base_color)  # quieter
    assert _contrast(bar, base_color) >= 1.5  # the bar is seen
    application = QApplication.instance()
    assert isinstance(application, QApplication)
    before = application.palette()
    application.setPalette(palette)  # the app's dark or light mode
    try:
        view = _shown(qtbot, TEXT)
        nested = _block(view, "A nested reply.")
        assert nested.begin().fragment().charFormat().foreground().color() == muted
        assert _bar_pixels(view, nested) == [bar.name(), bar.name()]
    finally:
        application.setPalette(before)
