"""The context bar: how much of the model's context window the last request used (its input
tokens, cached or not, against the window), as a thin bar with the numbers in its tooltip.
From ``COMPACT_THRESHOLD`` on it turns amber and offers Compact (app.core.agent.compaction)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QToolButton, QWidget

from app.ui.tones import Tone, border_colour, follow_palette

# The same threshold as app.core.agent.compaction.COMPACT_THRESHOLD (not imported: the panel
# is built before the agent's modules are loaded).
COMPACT_THRESHOLD = 0.8
_STEPS = 1000
_NORMAL = "QProgressBar::chunk { background: palette(highlight); }"


def _full() -> str:
    return f"QProgressBar::chunk {{ background: {border_colour(Tone.WARNING)}; }}"


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


class ContextBar(QWidget):
    compact_requested = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("context-bar")
        self.used = 0
        self.limit = 0
        self.bar = QProgressBar()
        self.bar.setObjectName("context-used")
        self.bar.setRange(0, _STEPS)
        self.bar.setTextVisible(False)
        self.bar.setFixedHeight(4)
        self.bar.setAccessibleName("Context window used")
        self.label = QLabel("")
        self.label.setObjectName("context-percent")
        self.label.setStyleSheet("QLabel { color: palette(placeholder-text); font-size: 11px; }")
        self.compact_button = QToolButton()
        self.compact_button.setObjectName("compact")
        self.compact_button.setText("Compact")
        self.compact_button.setToolTip(
            "Summarise the conversation so far (one request) and send the summary instead of "
            "the whole history from now on. The transcript stays as it is.")
        self.compact_button.hide()
        self.compact_button.clicked.connect(self.compact_requested)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.bar, 1)
        row.addWidget(self.label)
        row.addWidget(self.compact_button)
        self.hide()

    @property
    def fraction(self) -> float:
        return self.used / self.limit if self.limit else 0.0

    def show_usage(self, used: int, window: int, *, estimate: bool = False) -> None:
        """The last request sent ``used`` tokens of ``window``; ``estimate``: after a
        compaction, the summary's size until the next request says."""
        self.used, self.limit = max(0, used), max(1, window)
        fraction = self.fraction
        self.bar.setValue(min(_STEPS, round(fraction * _STEPS)))
        full = fraction >= COMPACT_THRESHOLD
        follow_palette(self.bar, lambda: _full() if full else _NORMAL)
        self.label.setText(f"{fraction:.0%}")
        what = "about " if estimate else ""
        tip = (f"Context window: {what}{_tokens(self.used)} of {_tokens(self.limit)} tokens "
               f"({fraction:.0%}) {'after compaction' if estimate else 'in the last request'}.")
        if full:
            tip += (" The conversation is close to the model's limit: Compact sends a summary "
                    "instead of the whole history.")
        self.setToolTip(tip)
        self.bar.setToolTip(tip)
        self.compact_button.setVisible(full)
        self.show()

    def clear(self) -> None:
        self.used = self.limit = 0
        self.compact_button.hide()
        self.hide()

    def set_busy(self, busy: bool) -> None:
        self.compact_button.setEnabled(not busy)
