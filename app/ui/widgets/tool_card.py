"""A tool call in the transcript: tool, decision and rule, status, duration, input and result."""

from __future__ import annotations

import json
from typing import Any

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

    def mark_approved(self) -> None:
        """The person approved an 'ask' call: say so instead of the rule's verdict."""
        self.decision_badge.setText("approved by you")

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
        self.result_section.set_text(make_visible(content))
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
