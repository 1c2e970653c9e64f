"""The bar left of a quoted block in a message, one per quote level (markdown_style indents
quoted blocks and mutes their text; a QTextBlockFormat has no border to draw the bar with).
Only the blocks in the exposed rectangle are visited, so a long message paints as fast."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QTextEdit

from app.ui.widgets.markdown_style import QUOTE_INDENT_PX, quote_colors, quote_level

QUOTE_BAR_PX = 3.0


def paint_quote_bars(view: QTextEdit, exposed: QRect) -> None:
    """Draw the bars of the quoted blocks that ``exposed`` (viewport coordinates) shows."""
    document = view.document()
    layout = document.documentLayout()
    dx = view.horizontalScrollBar().value()
    dy = view.verticalScrollBar().value()
    top = exposed.top() + dy
    position = layout.hitTest(QPointF(0, top), Qt.HitTestAccuracy.FuzzyHit)
    block = document.findBlock(max(position, 0))
    # The application's palette, as the text was coloured with: a message's own palette has
    # a transparent base (its style sheet).
    _text, bar_color = quote_colors()
    painter: QPainter | None = None
    while block.isValid():
        rect = layout.blockBoundingRect(block)
        if rect.top() > exposed.bottom() + dy:
            break
        level = quote_level(block.blockFormat())
        if level:
            if painter is None:
                painter = QPainter(view.viewport())
            for depth in range(level):
                x = rect.left() + depth * QUOTE_INDENT_PX + 2 - dx
                painter.fillRect(QRectF(x, rect.top() - dy, QUOTE_BAR_PX, rect.height()),
                                 bar_color)
        block = block.next()
    if painter is not None:
        painter.end()
