"""A tool call in the transcript: tool, decision and rule, status, duration, input and result.

A call the reviewer models saw (app.core.review) says who decided it — "approved by review",
"rejected by review" — in its decision badge, and keeps the reviews in a collapsed section that
fills in as verdicts arrive (``add_review``, then ``set_review_result``)."""

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
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.agent.checkpointing import CallChanges, Checkpointer, UndoRecord
from app.core.outcomes import CardStatus
from app.core.store.audit import INTERRUPTED_WHILE_RUNNING, NOT_RUN_INTERRUPTED
from app.core.visible_text import make_visible
from app.ui.widgets.badges import badge
from app.ui.widgets.highlighters import JsonHighlighter
from app.ui.widgets.review_panel import OUTCOME_TEXT, ReviewsPanel

if TYPE_CHECKING:
    from app.core.review import QuorumResult, Review

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
_GOOD, _WAITING, _BAD = "#1a7f37", "#9a6700", "#cf222e"
_STATUS_COLOUR: dict[CardStatus, str] = {
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


def readable_result(content: str) -> str | None:
    """A command's result (shell_exec, shell_jobs: a JSON object with stdout / stderr) as the
    text a terminal would show: the command, the exit code, then stdout and stderr as lines.
    None for any other result (shown as it is)."""
    if not content.startswith("{"):
        return None
    try:
        value = json.loads(content)
    except ValueError:
        return None
    if not isinstance(value, dict) or not ({"stdout", "stderr"} & value.keys()):
        return None
    lines: list[str] = []
    if isinstance(value.get("command"), str):
        lines.append(f"$ {value['command']}")
    facts: list[str] = []
    if value.get("job_id"):
        facts.append(f"job {value['job_id']}")
    if value.get("status"):
        facts.append(str(value["status"]))
    if value.get("exit_code") is not None:
        facts.append(f"exit code {value['exit_code']}")
    if value.get("timed_out"):
        facts.append("timed out")
    if isinstance(value.get("duration_ms"), int):
        facts.append(f"{value['duration_ms']} ms")
    if value.get("sandboxed") is not None:
        facts.append("sandboxed" if value["sandboxed"] else "not sandboxed")
    if value.get("cwd"):
        facts.append(f"in {value['cwd']}")
    if facts:
        lines.append(" · ".join(facts))
    for stream in ("stdout", "stderr"):
        text = value.get(stream)
        if not isinstance(text, str):
            continue
        lines.append("")
        lines.append(f"── {stream} ──" if text else f"── {stream} (empty) ──")
        if text:
            lines.append(text.rstrip("\n"))
    return "\n".join(lines)


_NOT_COVERED_WHY = "over the size cap / nested repositories"
_MAX_TOOLTIP_PATHS = 40


def _link_button(text: str, name: str) -> QPushButton:
    button = QPushButton(text)
    button.setObjectName(name)
    button.setFlat(True)
    button.setStyleSheet("QPushButton { color: palette(link); padding: 0 6px; border: none; }"
                         "QPushButton:hover { text-decoration: underline; }"
                         "QPushButton:disabled { color: palette(placeholder-text); }")
    return button


def _path_list(paths: tuple[str, ...] | list[str]) -> str:
    shown = list(paths[:_MAX_TOOLTIP_PATHS])
    if len(paths) > _MAX_TOOLTIP_PATHS:
        shown.append(f"… and {len(paths) - _MAX_TOOLTIP_PATHS} more")
    return "\n".join(shown)


class ChangesRow(QWidget):
    """What the call changed in the project: "3 files changed", Diff, Undo this call / Redo."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("changes-row")
        self.label = QLabel("")
        self.label.setObjectName("changes-summary")
        self.diff_button = _link_button("Diff", "changes-diff")
        self.diff_button.setToolTip("Show what this call changed")
        self.undo_button = _link_button("Undo this call", "changes-undo")
        self.undo_button.setToolTip("Restore the files this call changed (with a preview)")
        self.redo_button = _link_button("Redo", "changes-redo")
        self.redo_button.setToolTip("Bring the call's changes back (with a preview)")
        self.not_covered = QLabel("")
        self.not_covered.setObjectName("changes-not-covered")
        self.not_covered.setWordWrap(True)
        self.not_covered.setStyleSheet("color: #9a6700; font-size: 11px;")
        self.not_covered.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        row.addWidget(self.label)
        row.addWidget(self.diff_button)
        row.addWidget(self.undo_button)
        row.addWidget(self.redo_button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addWidget(self.not_covered)


# (foreground, background) of the decision badge once the reviewers decided, and of a call a
# ``review`` rule sent to them (badges.py has no colour for it).
_REVIEW_BADGE: dict[str, tuple[str, str]] = {
    "review": ("#ffffff", "#8250df"),
    "approved": ("#ffffff", "#1a7f37"),
    "rejected": ("#ffffff", "#cf222e"),
    "ask": ("#1f2328", "#d4a72c"),
}


def _badge_colours(label: QLabel, colours: tuple[str, str]) -> None:
    fg, bg = colours
    label.setStyleSheet(f"QLabel {{ color: {fg}; background: {bg}; border-radius: 7px;"
                        " padding: 1px 7px; font-size: 11px; font-weight: 600; }")


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


class ToolCard(QFrame):
    diff_requested = Signal()
    undo_requested = Signal()
    redo_requested = Signal()

    def __init__(self, tool_use_id: str, tool_name: str, server_id: str, tool_input: Any,
                 decision_kind: str, rule_text: str) -> None:
        super().__init__()
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
            _badge_colours(self.decision_badge, _REVIEW_BADGE["review"])
        self.apply_decided_by(rule_text)

    def mark_approved(self) -> None:
        """The person approved an 'ask' call: say so instead of the rule's verdict."""
        self.decision_badge.setText("approved by you")
        _badge_colours(self.decision_badge, _REVIEW_BADGE["approved"])

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
        text = (decided_by or "").strip()
        for prefix, outcome in (("approved by review", "approved"),
                                ("rejected by review", "rejected"),
                                ("plan rejected by review", "rejected")):
            if text.startswith(prefix):
                self._set_review_outcome(outcome, text.partition(":")[2].strip())
                return

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
        _badge_colours(self.decision_badge, _REVIEW_BADGE.get(outcome, _REVIEW_BADGE["ask"]))
        if reason:
            self.decision_badge.setToolTip(make_visible(reason))

    def set_status(self, status: CardStatus) -> None:
        self.status = status
        self.status_label.setText(_STATUS_TEXT[status])
        colour = _STATUS_COLOUR.get(status)
        self.status_label.setStyleSheet(f"color: {colour};" if colour else "")

    def finish(self, outcome: str, is_error: bool, duration_ms: int, content: str) -> None:
        """``outcome`` is an audit outcome, or an interrupted status for a reloaded call."""
        self.set_status(CardStatus.for_outcome(outcome, is_error))
        if duration_ms:
            self.duration_label.setText(f"{duration_ms} ms")
        # Command output as text (stdout, stderr, exit code), not JSON with "\n" escapes; the
        # model still gets ``content`` as it is.
        self.result_content = content
        self.result_section.set_text(make_visible(readable_result(content) or content))
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
        row = self.changes_row
        paths = changes.paths
        row.label.setToolTip(_path_list(list(paths)) if paths else "")
        missing = changes.not_covered
        if missing:
            n = len(missing)
            row.not_covered.setText(f"not covered: {n} file{'s' if n != 1 else ''} "
                                    f"({_NOT_COVERED_WHY})")
            row.not_covered.setToolTip(_path_list(list(missing)))
            row.not_covered.show()
        else:
            row.not_covered.hide()
        self._sync_changes()
        row.show()

    def set_changes_unavailable(self, reason: str) -> None:
        """A reloaded call whose checkpoints are gone (pruned, another project)."""
        row = self.changes_row
        row.label.setText(f"files changed — cannot be undone ({reason})")
        row.label.setStyleSheet("color: palette(placeholder-text);")
        for button in (row.diff_button, row.undo_button, row.redo_button):
            button.hide()
        row.show()

    def set_undone(self, record: UndoRecord) -> None:
        self.undo_record = record
        self._sync_changes()

    def set_redone(self) -> None:
        self.undo_record = None
        self._sync_changes()

    def set_actions_enabled(self, enabled: bool) -> None:
        """Off while a restore runs (one at a time)."""
        row = self.changes_row
        for button in (row.undo_button, row.redo_button):
            button.setEnabled(enabled)

    def _sync_changes(self) -> None:
        row = self.changes_row
        if self.changes is None:
            return
        changed = bool(self.changes.changes)
        undoable = changed and self.checkpointer is not None
        if self.undone:
            row.label.setText("↶ Undone")
            row.label.setStyleSheet("color: #9a6700; font-weight: bold;")
        else:
            row.label.setText(("✎ " if changed else "") + self.changes.summary())
            row.label.setStyleSheet("" if changed else "color: palette(placeholder-text);")
        row.diff_button.setVisible(changed and self.checkpointer is not None)
        row.undo_button.setVisible(undoable and not self.undone)
        row.redo_button.setVisible(undoable and self.undone)
