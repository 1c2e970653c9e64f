"""What the transcript shows at the end of a conversation besides its messages: the versions of
the last answer ("‹ 1/2 ›", after a Regenerate) and the mark of a prompt the model never
answered (its request failed or was stopped), with Resend. The panel's
``answer_end.AnswerEnd`` decides when they are shown and acts on them."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton

from app.ui.tones import Tone, tone, tone_text
from app.ui.widgets.transcript_view import USER_MESSAGE_STYLE


def unanswered_style() -> str:
    """A user message the model never answered: framed in the error cards' red."""
    return USER_MESSAGE_STYLE.replace("}", f"border: 1px solid {tone(Tone.DANGER).text.name()}; }}")


class VersionSwitch(QFrame):
    """"‹ 2/3 ›" under the last answer; ``chosen`` with the position asked for (0-based)."""

    chosen = Signal(int)

    def __init__(self, shown: int, count: int) -> None:
        super().__init__()
        self.setObjectName("answer-versions")
        self.shown, self.count = shown, count
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 0, 4, 0)
        row.setSpacing(2)
        self.previous_button = self._arrow("‹", "previous-version", "Previous version")
        self.label = QLabel(f"{shown + 1}/{count}")
        self.label.setObjectName("answer-version")
        self.label.setAccessibleName(f"Answer version {shown + 1} of {count}")
        self.label.setToolTip("Regenerate keeps the earlier answers: the arrows show them, "
                              "and the conversation continues from the one shown.")
        self.next_button = self._arrow("›", "next-version", "Next version")
        row.addWidget(self.previous_button)
        row.addWidget(self.label)
        row.addWidget(self.next_button)
        row.addStretch(1)
        self.previous_button.clicked.connect(lambda: self.chosen.emit(self.shown - 1))
        self.next_button.clicked.connect(lambda: self.chosen.emit(self.shown + 1))
        self.set_enabled(True)

    def _arrow(self, text: str, name: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setObjectName(name)
        button.setToolTip(tip)
        button.setAccessibleName(tip)
        button.setAutoRaise(True)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        button.setStyleSheet("QToolButton { font-size: 16px; padding: 0 6px; }")  # a target
        return button

    def set_enabled(self, enabled: bool) -> None:
        """Not while a run goes; an arrow past either end never works."""
        self.previous_button.setEnabled(enabled and self.shown > 0)
        self.next_button.setEnabled(enabled and self.shown < self.count - 1)


class UnansweredBar(QFrame):
    """Under a prompt the model never answered: the badge and Resend (``resend``)."""

    resend = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("unanswered-prompt")
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 0, 4, 0)
        self.badge = QLabel("⚠ Not answered")
        self.badge.setObjectName("unanswered-badge")
        tone_text(self.badge, Tone.DANGER, "font-weight: bold;")
        self.badge.setToolTip("The request failed or was stopped before the model answered. "
                              "Resend sends this message again; a new message takes its "
                              "place instead.")
        self.badge.setAccessibleName("This message was not answered")
        self.resend_button = QPushButton("Resend")
        self.resend_button.setObjectName("resend-prompt")
        self.resend_button.setToolTip("Send this message again, as its own turn")
        self.resend_button.clicked.connect(self.resend)
        row.addStretch(1)
        row.addWidget(self.badge)
        row.addWidget(self.resend_button)

    def set_enabled(self, enabled: bool) -> None:
        self.resend_button.setEnabled(enabled)
