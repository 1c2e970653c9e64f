"""The reviewer models' verdicts on a call (app.core.review), for the approval dialog and the
tool card: one row per review (reviewer, model, verdict badge, risk, latency, rationale,
concerns, error) and the quorum's reason on top.

Everything a reviewer wrote is shown as plain text through ``make_visible``: a reviewer's
answer is model output about untrusted input, never markup. The module imports no part of
``app.core.review`` at run time (it reads the reviews' attributes), so opening it costs Qt only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.core.visible_text import make_visible
from app.ui.tones import Tone, callout_style, follow_palette, text_style, tone_callout
from app.ui.widgets.badges import outlined_pill_style, pill_style

if TYPE_CHECKING:
    from app.core.review import QuorumResult, Review

# The tones of the verdict (filled) and risk (outlined) badges.
VERDICT_TONES: dict[str, Tone] = {
    "approve": Tone.SUCCESS,
    "reject": Tone.DANGER,
    "escalate": Tone.WARNING,
}
RISK_TONES: dict[str, Tone] = {
    "low": Tone.SUCCESS,
    "medium": Tone.WARNING,
    "high": Tone.DANGER,
}
_REASON_TONES = {"approved": Tone.SUCCESS, "rejected": Tone.DANGER}
OUTCOME_TEXT: dict[str, str] = {
    "approved": "approved by review",
    "rejected": "rejected by review",
    "ask": "reviewers asked you",
}
_MUTED = "color: palette(placeholder-text);"


def _pill(text: str, name: str, style: Callable[[], str]) -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    follow_palette(label, style)
    return label


def _plain(text: str, name: str, style: str | Callable[[], str] = "") -> QLabel:
    label = QLabel(make_visible(text))
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if isinstance(style, str):
        if style:
            label.setStyleSheet(f"QLabel {{ {style} }}")
    else:
        follow_palette(label, style)
    return label


def latency_text(ms: int) -> str:
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


class ReviewRow(QFrame):
    """One reviewer's answer."""

    def __init__(self, review: Review, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.review = review
        self.setObjectName("review-row")
        self.setStyleSheet("QFrame#review-row { border: 1px solid palette(mid); "
                           "border-radius: 6px; }")
        header = QHBoxLayout()
        header.setSpacing(6)
        self.name_label = _plain(review.reviewer, "review-reviewer", "font-weight: 600;")
        self.name_label.setWordWrap(False)
        header.addWidget(self.name_label)
        self.model_label = _plain(review.model, "review-model", _MUTED + " font-size: 11px;")
        self.model_label.setWordWrap(False)
        header.addWidget(self.model_label)
        header.addStretch(1)
        self.verdict_badge = _pill(review.verdict, f"review-verdict-{review.verdict}",
                                   functools.partial(pill_style, VERDICT_TONES.get(
                                       review.verdict, Tone.WARNING)))
        header.addWidget(self.verdict_badge)
        self.risk_badge = _pill(f"{review.risk} risk", f"review-risk-{review.risk}",
                                functools.partial(outlined_pill_style, RISK_TONES.get(
                                    review.risk, Tone.DANGER)))
        header.addWidget(self.risk_badge)
        self.latency_label = _plain(latency_text(review.latency_ms), "review-latency",
                                    _MUTED + " font-size: 11px;")
        self.latency_label.setWordWrap(False)
        tokens = review.input_tokens + review.output_tokens
        if tokens:
            self.latency_label.setToolTip(f"{review.input_tokens} input + "
                                          f"{review.output_tokens} output tokens")
        header.addWidget(self.latency_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 5, 8, 5)
        layout.setSpacing(2)
        layout.addLayout(header)
        self.error_label: QLabel | None = None
        if review.error:
            self.error_label = _plain(f"⚠ Reviewer failed: {review.error}", "review-error",
                                      functools.partial(text_style, Tone.DANGER))
            layout.addWidget(self.error_label)
        else:
            self.rationale_label = _plain(review.rationale, "review-rationale")
            layout.addWidget(self.rationale_label)
        self.concerns_label: QLabel | None = None
        if review.concerns:
            self.concerns_label = _plain("\n".join(f"• {c}" for c in review.concerns),
                                         "review-concerns",
                                         functools.partial(text_style, Tone.WARNING, "QLabel",
                                                           "font-size: 11px;"))
            layout.addWidget(self.concerns_label)


class ReviewsPanel(QFrame):
    """The reviews of one call, filled in as they arrive (``add_review``) or all at once
    (``set_reviews`` / ``set_result``), with the quorum's reason on top."""

    def __init__(self, parent: QWidget | None = None, *, title: bool = True) -> None:
        super().__init__(parent)
        self.setObjectName("reviews-panel")
        self.rows: list[ReviewRow] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self.title = QLabel("<b>Reviews</b>")
        self.title.setObjectName("reviews-title")
        self.title.setVisible(title)
        layout.addWidget(self.title)
        self.reason_label = _plain("", "reviews-reason",
                                   functools.partial(callout_style, Tone.WARNING))
        self.reason_label.hide()
        layout.addWidget(self.reason_label)
        self._rows_layout = QVBoxLayout()
        self._rows_layout.setSpacing(4)
        layout.addLayout(self._rows_layout)
        self.empty_label = _plain("Waiting for the reviewers…", "reviews-empty", _MUTED)
        layout.addWidget(self.empty_label)

    def set_reason(self, reason: str, outcome: str = "ask") -> None:
        self.reason_label.setText(make_visible(reason))
        self.reason_label.setVisible(bool(reason))
        tone_callout(self.reason_label, _REASON_TONES.get(outcome, Tone.WARNING))

    def add_review(self, review: Review) -> ReviewRow:
        """One more verdict; a second one from the same reviewer and model replaces the first."""
        for row in list(self.rows):
            if (row.review.reviewer, row.review.model) == (review.reviewer, review.model):
                self._drop(row)
                self.rows.remove(row)
        row = ReviewRow(review)
        self.rows.append(row)
        self._rows_layout.addWidget(row)
        self.empty_label.hide()
        return row

    def _drop(self, row: ReviewRow) -> None:
        self._rows_layout.removeWidget(row)
        row.hide()
        row.deleteLater()

    def set_reviews(self, reviews: Iterable[Review]) -> None:
        for row in self.rows:
            self._drop(row)
        self.rows = []
        for review in reviews:
            self.add_review(review)
        self.empty_label.setVisible(not self.rows)
        if not self.rows:
            self.empty_label.setText("No reviewer answered.")

    def set_result(self, result: QuorumResult) -> None:
        self.set_reviews(result.reviews)
        self.set_reason(result.reason, result.outcome)


def reviews_text(data: Mapping[str, Any] | None) -> str:
    """Plain text of a stored quorum result (``ToolExecution.reviews``: ``{"outcome",
    "reason", "reviews": [...]}``), for the history's detail pane; '' for None. Reads the
    JSON leniently: a row written by another version must still show."""
    if not isinstance(data, Mapping):
        return ""
    outcome = str(data.get("outcome", ""))
    lines = [f"reviews: {OUTCOME_TEXT.get(outcome, outcome or '?')}"]
    if data.get("reason"):
        lines.append(f"  {data['reason']}")
    for review in data.get("reviews") or ():
        if not isinstance(review, Mapping):
            continue
        tokens = int(review.get("input_tokens") or 0), int(review.get("output_tokens") or 0)
        lines.append(f"  - {review.get('reviewer', '?')} ({review.get('model', '?')}): "
                     f"{review.get('verdict', '?')}, {review.get('risk', '?')} risk, "
                     f"{latency_text(int(review.get('latency_ms') or 0))}, "
                     f"{tokens[0]}+{tokens[1]} tokens")
        if review.get("error"):
            lines.append(f"      error: {review['error']}")
        elif review.get("rationale"):
            lines.append(f"      {review['rationale']}")
        for concern in review.get("concerns") or ():
            lines.append(f"      • {concern}")
    return make_visible("\n".join(lines))
