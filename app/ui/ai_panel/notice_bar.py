"""One-time notices (``Services.take_notices``: e.g. what an update changed in the permission
defaults), shown at the top of the AI panel as dismissible info bars, never as a modal box."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from app.ui.tones import Tone, follow_palette, surface_style


class NoticeBar(QFrame):
    """One notice: its text and a ✕ that removes the bar."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("notice")
        follow_palette(self, lambda: surface_style(Tone.WARNING, "QFrame#notice"))
        self.label = QLabel("ℹ " + text)
        self.label.setObjectName("notice-text")
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.dismiss_button = QToolButton()
        self.dismiss_button.setObjectName("notice-dismiss")
        self.dismiss_button.setText("✕")
        self.dismiss_button.setToolTip("Dismiss")
        self.dismiss_button.setAutoRaise(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.dismiss_button, 0, Qt.AlignmentFlag.AlignTop)
        self.dismiss_button.clicked.connect(self.dismiss)

    def dismiss(self) -> None:
        self.hide()
        self.deleteLater()


class Notices(QWidget):
    """A column of NoticeBars; empty (and taking no space) when there is none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("notices")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)

    def add(self, text: str) -> NoticeBar:
        bar = NoticeBar(text, self)
        self._layout.addWidget(bar)
        return bar

    def bars(self) -> list[NoticeBar]:
        return [bar for bar in self.findChildren(NoticeBar) if not bar.isHidden()]
