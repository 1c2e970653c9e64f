"""Table model over ``tool_executions`` (newest first), with filters.

"Who decided" names who let the call run or stopped it — you, the reviewer models, a rule, the
permission mode, a guard — derived from the row's decision, outcome, ``decided_by`` and
``reviews``; "Decided by" keeps the words of what decided."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor

from app.core.store.audit import AuditRepository, ToolExecution
from app.core.visible_text import make_visible
from app.ui.models.base import Index, RowsTableModel


class HistoryTableModel(RowsTableModel[ToolExecution]):
    COL_TIME, COL_TOOL, COL_SERVER, COL_DECISION, COL_WHO, COL_DECIDED_BY, COL_OUTCOME, \
        COL_DURATION, COL_INPUT = range(9)
    HEADERS = ("Time", "Tool", "Server", "Decision", "Who decided", "Decided by", "Outcome",
               "Duration", "Input")
    DECIDED_BY_CHARS = 70
    ExecutionRole = Qt.ItemDataRole.UserRole + 1

    def __init__(self, audit: AuditRepository, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.audit = audit
        self.tool_filter: str | None = None
        self.decision_filter: str | None = None
        self.errors_only = False
        self._rows: list[ToolExecution] = []
        self.reload()

    def set_filters(self, *, tool: str | None, decision: str | None, errors_only: bool) -> None:
        self.tool_filter, self.decision_filter, self.errors_only = tool, decision, errors_only
        self.reload()

    def reload(self) -> None:
        self.beginResetModel()
        self._rows = self.audit.list(tool_name=self.tool_filter, decision=self.decision_filter,
                                     errors_only=self.errors_only, limit=1000)
        self.endResetModel()

    def execution_at(self, row: int) -> ToolExecution:
        return self._rows[row]

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = self.row_for(index)
        if row is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == self.COL_TIME:
                return row.created_at.replace("T", " ")[:19]
            if column == self.COL_TOOL:
                return row.tool_name
            if column == self.COL_SERVER:
                return row.server_id
            if column == self.COL_DECISION:
                return row.decision
            if column == self.COL_WHO:
                return who_decided(row)
            if column == self.COL_DECIDED_BY:
                text = make_visible(decided_by(row))
                return text if len(text) <= self.DECIDED_BY_CHARS else \
                    text[:self.DECIDED_BY_CHARS - 1] + "…"
            if column == self.COL_OUTCOME:
                # Not finished (or interrupted by the app stopping): say that, never the
                # placeholder outcome the row holds meanwhile.
                if row.status_label is not None:
                    return row.status_label
                return row.outcome + (" (error)" if row.is_error and row.outcome == "executed"
                                      else "")
            if column == self.COL_DURATION:
                return "" if row.duration_ms is None else f"{row.duration_ms} ms"
            if column == self.COL_INPUT:
                # Hidden characters shown as marked escapes; escaped first, so the 120
                # characters counted are the ones a person sees.
                text = make_visible(json.dumps(row.input, ensure_ascii=False))
                return text if len(text) <= 120 else text[:117] + "…"
        if role == Qt.ItemDataRole.ForegroundRole and column == self.COL_OUTCOME and \
                (row.is_error or row.outcome != "executed"):
            return QColor("#cf222e")
        if role == Qt.ItemDataRole.ForegroundRole and column == self.COL_WHO:
            who = who_decided(row)
            return QColor("#8250df") if "review" in who else None
        if role == Qt.ItemDataRole.ToolTipRole and column == self.COL_DECIDED_BY:
            return make_visible(decided_by(row)) or None
        if role == self.ExecutionRole:
            return row
        return None


def decided_by(row: ToolExecution) -> str:
    """What decided the call, in words (recorded since permission modes exist); for an older
    row, the rule that decided it, if any."""
    if row.decided_by:
        return row.decided_by
    return f"rule #{row.rule_id}" if row.rule_id else ""


_MODE_PREFIXES = ("auto mode", "plan mode")
_STOPPED_PREFIX = "The user stopped the run before approving"


def review_outcome(row: ToolExecution) -> str | None:
    """approved | rejected | ask when the reviewers saw the call, else None: from the stored
    reviews, or for a row without them from ``decided_by``."""
    data = row.reviews
    if isinstance(data, dict) and data.get("outcome") in ("approved", "rejected", "ask"):
        return str(data["outcome"])
    text = (row.decided_by or "").lower()
    if text.startswith("approved by review"):
        return "approved"
    if text.startswith(("rejected by review", "plan rejected by review")):
        return "rejected"
    return None


def who_decided(row: ToolExecution) -> str:
    """Who let the call run or stopped it: "approved by you", "declined by you", "approved by
    review", "rejected by review", "allowed by rule", "denied by mode", …; '' when nobody
    decided (an invalid input, a call stopped before it was reached)."""
    reviewed = review_outcome(row)
    if reviewed == "approved":
        return "approved by review"
    if reviewed == "rejected":
        return "rejected by review"
    after = " (after review)" if reviewed == "ask" else ""
    if row.decision == "ask":
        if row.state == "pending":
            waiting = row.status_label == "waiting for approval"
            return ("waiting for you" if waiting else "not answered") + after
        if row.state == "running" or row.outcome == "executed":
            return "approved by you" + after
        if row.outcome == "declined":
            if (row.output or "").startswith(_STOPPED_PREFIX):
                return "not answered (stopped)" + after
            return "declined by you" + after
        return ""
    if row.decision not in ("allow", "deny") or row.outcome == "invalid":
        return ""
    verb = "allowed by" if row.decision == "allow" else "denied by"
    text = (row.decided_by or "").strip().lower()
    if text.startswith(_MODE_PREFIXES):
        return f"{verb} mode"
    if row.rule_id or text.startswith("rule"):
        return f"{verb} rule"
    if text and not text.startswith("no rule matched"):
        return f"{verb} guard"
    return f"{verb} default"
