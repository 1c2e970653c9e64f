"""A one-line label whose text never sets the window's minimum width.

A plain QLabel asks for the width of its whole text as its minimum, so one long status, usage
line or path made the main window wider than a laptop screen (Send and Stop off it). This one
shows as much of the text as fits, elided with "…", and the whole text as its tooltip when it is
cut (unless the owner set a tooltip of its own). ``text()`` is always the whole text.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

# The narrowest it gets: room for "…" and a letter or two.
MINIMUM_CHARACTERS = 3


class ElidedLabel(QLabel):
    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._whole = ""
        self._own_tooltip = ""
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)
        # Takes the room the layout gives it; its text's width is no claim on the window's.
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def text(self) -> str:  # the whole text, not the elided one
        return self._whole

    def setText(self, text: str) -> None:
        self._whole = text
        self._show_fitting()

    def toolTip(self) -> str:
        return self._own_tooltip or super().toolTip()

    def setToolTip(self, tooltip: str) -> None:
        self._own_tooltip = tooltip
        self._show_fitting()

    def sizeHint(self) -> QSize:
        margin = 2 * self.margin() + self.contentsMargins().left() + \
            self.contentsMargins().right()
        return QSize(self.fontMetrics().horizontalAdvance(self._whole) + margin,
                     super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        width = self.fontMetrics().averageCharWidth() * MINIMUM_CHARACTERS if self._whole else 0
        return QSize(width, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._show_fitting()

    def _show_fitting(self) -> None:
        room = self.contentsRect().width() - 2 * self.margin()
        shown = self.fontMetrics().elidedText(self._whole, Qt.TextElideMode.ElideRight,
                                              max(room, 0))
        if shown != super().text():
            super().setText(shown)
        cut = shown != self._whole
        super().setToolTip(self._own_tooltip or (self._whole if cut else ""))
