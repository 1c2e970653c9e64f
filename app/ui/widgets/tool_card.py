"""A tool call in the transcript: tool, decision and rule, status, duration, input and result.

A call the reviewer models saw (app.core.review) says who decided it — "approved by review",
"rejected by review" — in its decision badge, and keeps the reviews in a collapsed section that
fills in as verdicts arrive (``add_review``, then ``set_review_result``).

The card's parts live next to it, one concern each: ``tool_card_reviews`` (the reviews section
and review badge), ``tool_card_changes`` (what the call changed, Diff / Undo / Redo),
``tool_card_media`` (progress, thumbnails) and ``command_output`` (a command's result as text)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.agent.checkpointing import CallChanges, Checkpointer, UndoRecord
from app.core.outcomes import CardStatus, Outcome, Verdict, result_label, verdict
from app.core.store.audit import INTERRUPTED_WHILE_RUNNING, NOT_RUN_INTERRUPTED
from app.core.visible_text import make_visible
from app.ui.tones import Tone, tone_text
from app.ui.widgets.badges import badge, show_verdict
from app.ui.widgets.command_output import readable_result
from app.ui.widgets.highlighters import JsonHighlighter
from app.ui.widgets.review_panel import OUTCOME_TEXT
from app.ui.widgets.tool_card_changes import ChangesRow
from app.ui.widgets.tool_card_media import ProgressRow, Thumbnails
from app.ui.widgets.tool_card_reviews import (
    REVIEW_BADGE,
    ReviewsSection,
    badge_colours,
    review_outcome_of,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from app.core.agent.events import SubAgentUpdated
    from app.core.review import QuorumResult, Review
    from app.core.tools.base import PersonView
    from app.core.tools.images import ImagePart
    from app.ui.widgets.sub_agent_rows import SubAgentControls, SubAgentRows

_STATUS_TEXT: dict[CardStatus, str] = {
    CardStatus.REQUESTED: "⋯ requested",
    CardStatus.AWAITING: "● waiting for your approval",
    CardStatus.RUNNING: "▶ running",
    CardStatus.EXECUTED: "✓ done",
    CardStatus.ERROR: "✗ failed",
    CardStatus.DECLINED: "✗ declined",
    CardStatus.DENIED: "✗ denied by a rule",
    CardStatus.CANCELLED: "■ cancelled",
    CardStatus.INVALID: "✗ invalid input",
    # A call the app never finished (killed or crashed): the tool history says the same.
    CardStatus.INTERRUPTED: f"■ {NOT_RUN_INTERRUPTED}",
    CardStatus.INTERRUPTED_RUNNING: f"■ {INTERRUPTED_WHILE_RUNNING}",
}
_GOOD, _WAITING, _BAD = Tone.SUCCESS, Tone.WARNING, Tone.DANGER
_STATUS_COLOUR: dict[CardStatus, Tone] = {
    CardStatus.EXECUTED: _GOOD,
    CardStatus.AWAITING: _WAITING,
    **dict.fromkeys((CardStatus.ERROR, CardStatus.DECLINED, CardStatus.DENIED,
                     CardStatus.CANCELLED, CardStatus.INVALID, CardStatus.INTERRUPTED,
                     CardStatus.INTERRUPTED_RUNNING), _BAD),
}


class _Collapsible(QWidget):
    def __init__(self, title: str, text: str, *, json_text: bool = False,
                 expanded: bool = False) -> None:
        super().__init__()
        self.toggle = QToolButton()
        self.toggle.setText(title)
        self.toggle.setCheckable(True)
        self.toggle.setChecked(expanded)
        self.toggle.setAutoRaise(True)
        self.body = QPlainTextEdit(text)
        self.body.setReadOnly(True)
        self.body.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.body.setMaximumHeight(220)
        if json_text:
            self._highlighter = JsonHighlighter(self.body.document())
        self.body.setVisible(expanded)
        self._sync_arrow(expanded)
        self.toggle.toggled.connect(self._on_toggled)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.toggle)
        layout.addWidget(self.body)

    def _sync_arrow(self, expanded: bool) -> None:
        text = self.toggle.text().lstrip("▸▾ ")
        self.toggle.setText(("▾ " if expanded else "▸ ") + text)

    def _on_toggled(self, expanded: bool) -> None:
        self.body.setVisible(expanded)
        self._sync_arrow(expanded)

    def set_text(self, text: str) -> None:
        self.body.setPlainText(text)


class ToolCard(QFrame):
    diff_requested = Signal()
    undo_requested = Signal()
    redo_requested = Signal()
    cancel_requested = Signal()  # the progress row's Cancel

    def __init__(self, tool_use_id: str, tool_name: str, server_id: str, tool_input: Any,
                 decision_kind: str, rule_text: str, *, decided_by: str | None = None,
                 has_rule: bool = False) -> None:
        """``decision_kind`` is the rules' answer (allow, ask, review, deny), ``decided_by``
        and ``has_rule`` what decided (``Decision.decided_by``, a rule): the badge says who
        let the call run or stopped it, in ``app.core.outcomes.Verdict``'s words."""
        super().__init__()
        self.decision_kind = decision_kind
        self.decided_by = decided_by or ""
        self.has_rule = has_rule
        self.ran = False  # the call started (ToolStarted, or its audit row says so)
        self.tool_use_id = tool_use_id
        self.tool_name = tool_name
        self.tool_input = tool_input
        self.result_content = ""  # the result as the model got it (the card shows it readably)
        # What the call changed (FilesChanged, or rebuilt from the audit row) and where.
        self.changes: CallChanges | None = None
        self.checkpointer: Checkpointer | None = None
        # Set while the call is undone: the restore to redo (shared by the calls undone with
        # it when a run or everything since a message was undone).
        self.undo_record: UndoRecord | None = None
        self.status = CardStatus.REQUESTED
        self.setObjectName("tool-card")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("QFrame#tool-card { border: 1px solid palette(mid); "
                           "border-radius: 8px; }")
        header = QHBoxLayout()
        name = QLabel(f"<b>{tool_name}</b>")
        header.addWidget(name)
        if server_id != "builtin":
            header.addWidget(badge(server_id, "neutral", "server"))
        self.decision_badge = badge(decision_kind, decision_kind, rule_text)
        header.addWidget(self.decision_badge)
        header.addStretch(1)
        self.status_label = QLabel(_STATUS_TEXT[CardStatus.REQUESTED])
        self.status_label.setObjectName("tool-status")
        header.addWidget(self.status_label)
        self.duration_label = QLabel("")
        self.duration_label.setStyleSheet("color: palette(placeholder-text);")
        header.addWidget(self.duration_label)
        self.rule_label = QLabel(rule_text)
        self.rule_label.setWordWrap(True)
        self.rule_label.setStyleSheet("color: palette(placeholder-text); font-size: 11px;")
        # What a person reads is what runs: ANSI escapes, bidi overrides and zero-width
        # characters in the input or the result are shown as marked escapes, not obeyed.
        self.input_section = _Collapsible(
            "Input", make_visible(json.dumps(tool_input, indent=2, ensure_ascii=False)),
            json_text=True)
        self.result_section = _Collapsible("Result", "")
        self.result_section.hide()
        self.changes_row = ChangesRow()
        self.changes_row.hide()
        self.changes_row.diff_button.clicked.connect(self.diff_requested)
        self.changes_row.undo_button.clicked.connect(self.undo_requested)
        self.changes_row.redo_button.clicked.connect(self.redo_requested)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(2)
        layout.addLayout(header)
        layout.addWidget(self.rule_label)
        layout.addWidget(self.input_section)
        layout.addWidget(self.result_section)
        layout.addWidget(self.changes_row)
        self._layout = layout
        self.reviews_section: ReviewsSection | None = None
        self.review_outcome: str | None = None  # approved | rejected | ask, once known
        if decision_kind == "review":
            badge_colours(self.decision_badge, REVIEW_BADGE["review"])
        self.apply_decided_by(rule_text)
        if self.review_outcome is None:
            self._show_verdict(verdict(decision_kind, self.decided_by, has_rule=has_rule))
        # Made when first needed (tool_card_media): most calls report no progress, no images.
        self.progress_row: ProgressRow | None = None
        self.sub_agents: SubAgentRows | None = None
        self.thumbnails: Thumbnails | None = None

    def set_progress(self, progress: float, total: float | None, message: str | None) -> None:
        """A running call's progress (ToolProgress): a bar, determinate when total is known."""
        if self.progress_row is None:
            self.progress_row = ProgressRow()
            self.progress_row.cancel_requested.connect(self.cancel_requested)
            self._layout.insertWidget(self._layout.indexOf(self.input_section) + 1,
                                      self.progress_row)
            self.progress_row.setVisible(True)  # the card may be on screen already
        self.progress_row.set_progress(progress, total, message)

    def show_sub_agent(self, event: SubAgentUpdated,
                       controls: SubAgentControls | None = None) -> None:
        """A sub-agent this call started moved on: its row in the tree under the input."""
        from app.ui.widgets.sub_agent_rows import SubAgentRows

        if self.sub_agents is None:
            self.sub_agents = SubAgentRows(controls)
            self._layout.insertWidget(self._layout.indexOf(self.input_section) + 1,
                                      self.sub_agents)
            self.sub_agents.setVisible(True)
        self.sub_agents.update_row(event)

    def mark_approved(self) -> None:
        """The person approved an 'ask' call: say so instead of the rule's verdict."""
        self.ran = True
        self.decision_badge.setText("approved by you")
        badge_colours(self.decision_badge, REVIEW_BADGE["approved"])

    # -- review (app.core.review) ----------------------------------------------------------------

    def _reviews(self) -> ReviewsSection:
        if self.reviews_section is None:
            self.reviews_section = ReviewsSection()
            # Under the rule line, above the input: who decided, then why.
            self._layout.insertWidget(self._layout.indexOf(self.input_section),
                                      self.reviews_section)
            self.reviews_section.setVisible(True)  # the card may be on screen already
        return self.reviews_section

    def add_review(self, review: Review) -> None:
        """One reviewer's verdict arrived (``ReviewArrived``)."""
        section = self._reviews()
        section.panel.add_review(review)
        section.sync()

    def handle_review_event(self, event: object) -> None:
        """``ReviewArrived`` / ``ReviewFinished`` for this card's call (the panel routes them
        by ``tool_use_id``); anything else is ignored."""
        from app.core.agent.events import ReviewArrived, ReviewFinished

        if isinstance(event, ReviewArrived):
            self.add_review(event.review)
        elif isinstance(event, ReviewFinished):
            self.set_review_result(event.result)

    def set_review_result(self, result: QuorumResult) -> None:
        """The reviewers' combined answer (``ReviewFinished``): the badge says who decided —
        "approved by review", "rejected by review", or "reviewers asked you" until the
        person answers — and the section holds every review and the reason."""
        section = self._reviews()
        section.panel.set_result(result)
        section.summary = OUTCOME_TEXT.get(result.outcome, result.outcome)
        section.sync()
        self._set_review_outcome(result.outcome, result.reason)

    def apply_decided_by(self, decided_by: str | None) -> None:
        """A reloaded call: its audit row's ``decided_by`` ("approved by review: …")."""
        found = review_outcome_of(decided_by)
        if found is not None:
            self._set_review_outcome(*found)

    def restore_reviews(self, reviews: Any, decided_by: str | None) -> None:
        """A reloaded call: its audit row's ``reviews`` (the stored QuorumResult dict, or None)
        and ``decided_by``. A row this version cannot read shows only the decided_by text."""
        if isinstance(reviews, dict):
            from app.core.review import QuorumResult

            try:
                result = QuorumResult.from_dict(reviews)
            except (KeyError, TypeError, ValueError):
                result = None
            if result is not None:
                self.set_review_result(result)
        self.apply_decided_by(decided_by)

    def _set_review_outcome(self, outcome: str, reason: str) -> None:
        self.review_outcome = outcome
        self.decision_badge.setText(OUTCOME_TEXT.get(outcome, outcome))
        self.decision_badge.setObjectName(f"badge-review-{outcome}")
        badge_colours(self.decision_badge, REVIEW_BADGE.get(outcome, REVIEW_BADGE["ask"]))
        if reason:
            self.decision_badge.setToolTip(make_visible(reason))

    def _show_verdict(self, found: Verdict) -> None:
        if self.review_outcome in ("approved", "rejected"):
            return  # the reviewers decided: their badge (same words) keeps its colours
        show_verdict(self.decision_badge, found)

    def _finish_labels(self, outcome: str, is_error: bool, content: str) -> None:
        """The finished call's badge, status and explanation in the shared vocabulary."""
        if self.status in (CardStatus.INTERRUPTED, CardStatus.INTERRUPTED_RUNNING):
            if self.decision_kind in ("ask", "review") and self.status == CardStatus.INTERRUPTED:
                self._show_verdict(Verdict.NOT_ANSWERED)
            return
        ran = self.ran or outcome == Outcome.EXECUTED
        found = verdict(self.decision_kind, self.decided_by, has_rule=self.has_rule,
                        outcome=outcome, ran=ran, review=self.review_outcome, output=content)
        self._show_verdict(found)
        words = result_label(outcome, is_error, ran=ran, refused=found)
        mark = "✓" if words == "done" else "■" if outcome == Outcome.CANCELLED else "✗"
        self.status_label.setText(f"{mark} {words}")
        first_line = make_visible(content.strip().splitlines()[0]) if content.strip() else ""
        if found in (Verdict.INVALID, Verdict.NOT_RUN, Verdict.REFUSED_BY_CAPABILITY):
            # Not "deny: no rule matched": no rule was asked about an input that never ran.
            self.rule_label.setText(f"{found.value}: {first_line}" if first_line
                                    else found.value)

    def set_status(self, status: CardStatus) -> None:
        if status == CardStatus.RUNNING:
            self.ran = True
        self.status = status
        self.status_label.setText(_STATUS_TEXT[status])
        colour = _STATUS_COLOUR.get(status)
        tone_text(self.status_label, colour)

    def finish(self, outcome: str, is_error: bool, duration_ms: int, content: str,
               images: Sequence[ImagePart] = (), for_person: PersonView | None = None) -> None:
        """``outcome`` is an audit outcome, or an interrupted status for a reloaded call;
        ``images`` the result's images, shown as thumbnails under it; ``for_person`` what is
        shown instead when the tool meant some of its content only for the person or the model."""
        shown = for_person.text if for_person is not None else content
        if for_person is not None:
            images = for_person.images
        if self.progress_row is not None:
            self.progress_row.hide()
        if images and self.thumbnails is None:
            self.thumbnails = Thumbnails(images)
            self._layout.insertWidget(self._layout.indexOf(self.result_section) + 1,
                                      self.thumbnails)
            self.thumbnails.setVisible(True)
        self.set_status(CardStatus.for_outcome(outcome, is_error))
        self._finish_labels(outcome, is_error, content)
        if duration_ms or self.ran:
            self.duration_label.setText(f"{duration_ms} ms")
        # Command output as text (stdout, stderr, exit code), not JSON with "\n" escapes; the
        # model still gets ``content`` as it is.
        self.result_content = content
        self.result_section.set_text(make_visible(readable_result(shown) or shown))
        self.result_section.show()
        if is_error:
            self.result_section.toggle.setChecked(True)

    # -- what the call changed ------------------------------------------------------------------

    @property
    def undone(self) -> bool:
        return self.undo_record is not None

    @property
    def has_changes(self) -> bool:
        return self.changes is not None and bool(self.changes.changes) and \
            self.checkpointer is not None

    def set_changes(self, changes: CallChanges, checkpointer: Checkpointer | None) -> None:
        """The call's change set: the summary line, and Diff / Undo when there is one."""
        self.changes = changes
        self.checkpointer = checkpointer
        self.undo_record = None
        self.changes_row.show_paths(changes)
        self._sync_changes()
        self.changes_row.show()

    def set_changes_unavailable(self, reason: str) -> None:
        """A reloaded call whose checkpoints are gone (pruned, another project)."""
        self.changes_row.show_unavailable(reason)

    def set_undone(self, record: UndoRecord) -> None:
        self.undo_record = record
        self._sync_changes()

    def set_redone(self) -> None:
        self.undo_record = None
        self._sync_changes()

    def set_actions_enabled(self, enabled: bool) -> None:
        """Off while a restore runs (one at a time)."""
        self.changes_row.set_actions_enabled(enabled)

    def _sync_changes(self) -> None:
        if self.changes is not None:
            self.changes_row.sync(self.changes, restorable=self.checkpointer is not None,
                                  undone=self.undone)
