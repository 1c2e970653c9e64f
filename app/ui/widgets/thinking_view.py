"""The model's reasoning for one turn (adaptive thinking), collapsed above its answer: a
toggle shows the text. Separate from the answer's view, so copying the answer never copies
the thinking."""

from __future__ import annotations

from PySide6.QtCore import Qt
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

    def _show(self, shown: bool) -> None:
        self.body.setVisible(shown)
        self.toggle.setText(("▾ " if shown else "▸ ") + self._title)
