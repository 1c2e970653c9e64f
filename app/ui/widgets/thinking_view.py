"""The model's reasoning for one turn (adaptive thinking), collapsed above its answer: a
toggle shows the text. Separate from the answer's view, so copying the answer never copies
the thinking."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel, QToolButton, QVBoxLayout, QWidget

from app.core.visible_text import make_visible


class ThinkingView(QWidget):
    def __init__(self, text: str, redacted: bool = False,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("thinking")
        words = len(text.split())
        title = ("Thinking (encrypted by the API; not shown)" if redacted else
                 f"Thinking ({words} word{'s' if words != 1 else ''})")
        self.toggle = QToolButton()
        self.toggle.setObjectName("thinking-toggle")
        self.toggle.setText(f"▸ {title}")
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.toggle.setStyleSheet("QToolButton { color: palette(placeholder-text); }")
        self.toggle.setEnabled(not redacted)
        self.body = QLabel(make_visible(text))
        self.body.setObjectName("thinking-text")
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.body.setWordWrap(True)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body.setStyleSheet("QLabel { color: palette(placeholder-text); padding-left: 14px; }")
        self.body.hide()
        self.toggle.toggled.connect(self._show)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.toggle)
        layout.addWidget(self.body)
        self._title = title
        # While it streams (``append``): its pieces, shown at most every 100 ms.
        self._parts: list[str] = [text]
        self._timer: QTimer | None = None

    def _show(self, shown: bool) -> None:
        self.body.setVisible(shown)
        self.toggle.setText(("▾ " if shown else "▸ ") + self._title)

    # -- live: the thinking as it streams --------------------------------------------------

    def append(self, text: str) -> None:
        """More of the thinking as it streams: shown at most every 100 ms (a long one is
        thousands of pieces; the label is set from the whole text each time)."""
        self._parts.append(text)
        if self._timer is None:
            self._timer = QTimer(self)
            self._timer.setSingleShot(True)
            self._timer.setInterval(100)
            self._timer.timeout.connect(self._refresh)
        if not self._timer.isActive():
            self._timer.start()

    def finish(self, text: str) -> None:
        """The whole block: what the stream showed, complete."""
        if self._timer is not None:
            self._timer.stop()
        self._parts = [text]
        self._refresh(live=False)

    def _refresh(self, live: bool = True) -> None:
        text = "".join(self._parts)
        words = len(text.split())
        self._title = (f"Thinking… ({words} word{'s' if words != 1 else ''})" if live else
                       f"Thinking ({words} word{'s' if words != 1 else ''})")
        self.body.setText(make_visible(text))
        self._show(self.toggle.isChecked())
