"""Table model over ``tool_executions`` (newest first), with filters.

"Who decided" names who let the call run or stopped it — approved by you, declined, allowed by
rule, denied by rule, refused by capability, invalid, not run, approved / rejected by review,
allowed by mode — and "Outcome" what became of it (done, failed, declined, not run, …): the
words of ``app.core.outcomes``, the same the transcript's cards use. "Decided by" keeps the
words of what decided."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QObject, Qt

from app.core.outcomes import Verdict
from app.core.store.audit import AuditRepository, ToolExecution, decided_by_text
from app.core.visible_text import make_visible
from app.ui.models.base import Index, RowsTableModel
from app.ui.tones import Tone, tone


class HistoryTableModel(RowsTableModel[ToolExecution]):
    # One decision column, in the shared words: the rules' raw kind ("ask") said nothing
    # about what the person then did.
    COL_TIME, COL_TOOL, COL_SERVER, COL_WHO, COL_DECIDED_BY, COL_OUTCOME, COL_DURATION, \
        COL_INPUT = range(8)
    COL_DECISION = COL_WHO
    HEADERS = ("Time", "Tool", "Server", "Who decided", "Decided by", "Outcome", "Duration",
               "Input")
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
            if column == self.COL_TOOL:  # a sub-agent's call names the agent chain
                return f"{row.tool_name} ({row.agent})" if row.agent else row.tool_name
            if column == self.COL_SERVER:
                return row.server_id
            if column == self.COL_WHO:
                return who_decided(row)
            if column == self.COL_DECIDED_BY:
                text = make_visible(decided_by(row))
                return text if len(text) <= self.DECIDED_BY_CHARS else \
                    text[:self.DECIDED_BY_CHARS - 1] + "…"
            if column == self.COL_OUTCOME:
                # Not finished (or interrupted by the app stopping): say that, never the
                # placeholder outcome the row holds meanwhile.
                return row.result_text
            if column == self.COL_DURATION:
                return "" if row.duration_ms is None else f"{row.duration_ms} ms"
            if column == self.COL_INPUT:
                # Hidden characters shown as marked escapes; escaped first, so the 120
                # characters counted are the ones a person sees.
                text = make_visible(json.dumps(row.input, ensure_ascii=False))
                return text if len(text) <= 120 else text[:117] + "…"
        if role == Qt.ItemDataRole.ForegroundRole and column == self.COL_OUTCOME and \
                (row.is_error or row.outcome != "executed"):
            return tone(Tone.DANGER).text
        if role == Qt.ItemDataRole.ForegroundRole and column == self.COL_WHO:
            who = who_decided(row)
            return tone(Tone.REVIEW).text if "review" in who else None
        if role == Qt.ItemDataRole.ToolTipRole and column == self.COL_DECIDED_BY:
            return make_visible(decided_by(row)) or None
        if role == self.ExecutionRole:
            return row
        return None


def decided_by(row: ToolExecution) -> str:
    """What decided the call, in words (``app.core.store.audit.decided_by_text``)."""
    return decided_by_text(row)


def review_outcome(row: ToolExecution) -> str | None:
    """approved | rejected | ask when the reviewers saw the call, else None: from the stored
    reviews, or for a row without them from ``decided_by``."""
    stored = row.review_outcome
    if stored is not None:
        return stored
    text = (row.decided_by or "").lower()
    if text.startswith("approved by review"):
        return "approved"
    if text.startswith(("rejected by review", "plan rejected by review")):
        return "rejected"
    return None


def who_decided(row: ToolExecution) -> str:
    """Who let the call run or stopped it (``ToolExecution.verdict``), "(after review)" when
    the reviewers passed the call to the person, "(stopped)" for a dialog Stop closed."""
    found = row.verdict
    if found is Verdict.NOT_ANSWERED and row.state == "done":
        return "not answered (stopped)"
    after = " (after review)" if review_outcome(row) == "ask" and found in (
        Verdict.APPROVED_BY_YOU, Verdict.DECLINED, Verdict.WAITING, Verdict.NOT_ANSWERED) \
        else ""
    return found.value + after
