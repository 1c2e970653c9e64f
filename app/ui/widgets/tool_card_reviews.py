"""The review part of a tool card: the collapsed "Reviews (n)" section, the decision badge's
colours once the reviewer models decided, and reading that decision back from a stored call.

Separate from the card (app.ui.widgets.tool_card): only calls a ``review`` rule sent to the
reviewers (app.core.review) use it, and it is the one place that knows how a review outcome
looks and how an audit row's ``decided_by`` spells it.
"""

from __future__ import annotations

import functools

from PySide6.QtWidgets import QLabel, QToolButton, QVBoxLayout, QWidget

from app.ui.tones import Tone, follow_palette
from app.ui.widgets.badges import pill_style
from app.ui.widgets.review_panel import ReviewsPanel

# The tone of the decision badge once the reviewers decided, and of a call a ``review`` rule
# sent to them (badges.py has no kind for it).
REVIEW_BADGE: dict[str, Tone] = {
    "review": Tone.REVIEW,
    "approved": Tone.SUCCESS,
    "rejected": Tone.DANGER,
    "ask": Tone.WARNING,
}

# How an audit row's ``decided_by`` starts when the reviewers decided, and their outcome.
_DECIDED_BY_PREFIXES = (("approved by review", "approved"),
                        ("rejected by review", "rejected"),
                        ("plan rejected by review", "rejected"))


def badge_colours(label: QLabel, name: Tone) -> None:
    follow_palette(label, functools.partial(pill_style, name))


def review_outcome_of(decided_by: str | None) -> tuple[str, str] | None:
    """(outcome, reason) when a stored call's ``decided_by`` ("approved by review: …") says the
    reviewers decided it; None otherwise."""
    text = (decided_by or "").strip()
    for prefix, outcome in _DECIDED_BY_PREFIXES:
        if text.startswith(prefix):
            return outcome, text.partition(":")[2].strip()
    return None


class ReviewsSection(QWidget):
    """The reviews of a call, collapsed under a "▸ Reviews (n)" toggle."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("card-reviews")
        self.toggle = QToolButton()
        self.toggle.setObjectName("card-reviews-toggle")
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.panel = ReviewsPanel(title=False)
        self.panel.setVisible(False)
        self.toggle.toggled.connect(self._on_toggled)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.toggle)
        layout.addWidget(self.panel)
        self.summary = ""
        self.sync()

    def _on_toggled(self, expanded: bool) -> None:
        self.panel.setVisible(expanded)
        self.sync()

    def sync(self) -> None:
        n = len(self.panel.rows)
        arrow = "▾ " if self.toggle.isChecked() else "▸ "
        text = f"Reviews ({n})" if n else "Reviews (waiting…)"
        self.toggle.setText(arrow + text + (f" — {self.summary}" if self.summary else ""))
