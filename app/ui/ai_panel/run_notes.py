"""What a run leaves in the transcript besides its messages and cards: the error card of a
failed turn (only the newest one's Retry works), the round-cap card with Continue, and the
grey notes ("■ Stopped.")."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from app.ui.widgets.transcript_view import ErrorCard, Transcript

CONTINUE_PROMPT = "Continue where you stopped."


def add_error_card(transcript: Transcript, message: str, retryable: bool,
                   retry: Callable[[], None]) -> None:
    """A failed turn: the newest card is the only one whose Retry works."""
    retire_error_cards(transcript)
    transcript.add(ErrorCard(message, retryable, retry))


def retire_error_cards(transcript: Transcript) -> None:
    for item in transcript.items():
        if isinstance(item, ErrorCard):
            item.retire()


def round_cap_card(iterations: int, carry_on: Callable[[str], bool]) -> QWidget:
    """The run reached the profile's round cap: not an error, the work can go on. Continue
    sends ``CONTINUE_PROMPT`` through ``carry_on`` as the next prompt (once)."""
    card = QFrame()
    card.setObjectName("round-cap-card")
    card.setStyleSheet("QFrame#round-cap-card { border: 1px solid palette(mid); "
                       "border-radius: 8px; }")
    row = QHBoxLayout(card)
    label = QLabel(f"Paused after {iterations} tool rounds (the profile's limit per "
                   "request). Continue to let the AI carry on where it stopped.")
    label.setWordWrap(True)
    row.addWidget(label, 1)
    button = QPushButton("Continue")
    button.setObjectName("round-cap-continue")

    def go_on() -> None:
        if carry_on(CONTINUE_PROMPT):
            button.setEnabled(False)

    button.clicked.connect(go_on)
    row.addWidget(button)
    return card


def grey_note(text: str, name: str = "cancelled-note") -> QLabel:
    """A grey line in the transcript: a stopped run's or compaction's."""
    note = QLabel(text)
    note.setObjectName(name)
    note.setStyleSheet("color: palette(placeholder-text);")
    return note


class RetryCountdown(QLabel):
    """"Rate limited — retrying in 12 s": counts down each second, and goes when the answer
    starts (``stop``) or the wait is over."""

    def __init__(self, seconds: float, why: str) -> None:
        super().__init__()
        from PySide6.QtCore import QTimer

        self.setObjectName("retry-countdown")
        self.setStyleSheet("color: palette(placeholder-text);")
        self.setAccessibleName("Retry countdown")
        self._why = why
        self._left = max(0, round(seconds))
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self._tick)
        self._show()
        self._timer.start()

    def _tick(self) -> None:
        self._left = max(0, self._left - 1)
        self._show()
        if self._left == 0:
            self._timer.stop()

    def _show(self) -> None:
        when = f"in {self._left} s" if self._left else "now"
        self.setText(f"⏳ {self._why.capitalize()} — retrying {when}…")

    def stop(self) -> None:
        self._timer.stop()
        self.hide()
