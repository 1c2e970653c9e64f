"""The reviewer models' verdicts on a call (app.core.review), for the approval dialog and the
tool card: one row per review (reviewer, model, verdict badge, risk, latency, rationale,
concerns, error) and the quorum's reason on top.

Everything a reviewer wrote is shown as plain text through ``make_visible``: a reviewer's
answer is model output about untrusted input, never markup. The module imports no part of
``app.core.review`` at run time (it reads the reviews' attributes), so opening it costs Qt only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.core.visible_text import make_visible

if TYPE_CHECKING:
    from app.core.review import QuorumResult, Review

# (foreground, background) of the verdict and risk badges.
VERDICT_COLOURS: dict[str, tuple[str, str]] = {
    "approve": ("#ffffff", "#1a7f37"),
    "reject": ("#ffffff", "#cf222e"),
    "escalate": ("#1f2328", "#d4a72c"),
}
RISK_COLOURS: dict[str, tuple[str, str]] = {
    "low": ("#1a7f37", "transparent"),
    "medium": ("#9a6700", "transparent"),
    "high": ("#cf222e", "transparent"),
}
OUTCOME_TEXT: dict[str, str] = {
    "approved": "approved by review",
    "rejected": "rejected by review",
    "ask": "reviewers asked you",
}
_MUTED = "color: palette(placeholder-text);"


def _pill(text: str, colours: tuple[str, str], name: str, *, border: bool = False) -> QLabel:
    fg, bg = colours
    label = QLabel(text)
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    edge = f"border: 1px solid {fg};" if border else "border: none;"
    label.setStyleSheet(f"QLabel {{ color: {fg}; background: {bg}; {edge} border-radius: 7px;"
                        " padding: 1px 7px; font-size: 11px; font-weight: 600; }")
    return label


def _plain(text: str, name: str, style: str = "") -> QLabel:
    label = QLabel(make_visible(text))
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if style:
        label.setStyleSheet(f"QLabel {{ {style} }}")
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
        self.verdict_badge = _pill(review.verdict, VERDICT_COLOURS.get(
            review.verdict, VERDICT_COLOURS["escalate"]), f"review-verdict-{review.verdict}")
        header.addWidget(self.verdict_badge)
        self.risk_badge = _pill(f"{review.risk} risk", RISK_COLOURS.get(
            review.risk, RISK_COLOURS["high"]), f"review-risk-{review.risk}", border=True)
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
                                      "color: #cf222e;")
            layout.addWidget(self.error_label)
        else:
            self.rationale_label = _plain(review.rationale, "review-rationale")
            layout.addWidget(self.rationale_label)
        self.concerns_label: QLabel | None = None
        if review.concerns:
            self.concerns_label = _plain("\n".join(f"• {c}" for c in review.concerns),
                                         "review-concerns", "color: #9a6700; font-size: 11px;")
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
                                   "background: #fff8c5; color: #4d2d00; border: 1px solid "
                                   "#d4a72c; border-radius: 6px; padding: 6px;")
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
        styles = {"approved": "background: #dafbe1; color: #0f5323; border: 1px solid #4ac26b;",
                  "rejected": "background: #ffebe9; color: #82071e; border: 1px solid #ff8182;"}
        style = styles.get(outcome, "background: #fff8c5; color: #4d2d00; "
                                    "border: 1px solid #d4a72c;")
        self.reason_label.setStyleSheet(f"QLabel {{ {style} border-radius: 6px; "
                                        "padding: 6px; }")

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
