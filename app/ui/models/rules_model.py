"""Table model over the permission rules; edits go through the repository and apply at once.

A rule that ignores the flow guard (``PermissionRule.ignore_flow``) is marked with a warning in
its "Flow guard" column. That opt-out is set in the rule editor, where its warning is read; here
it can only be switched off (its checkbox)."""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import (
    QObject,
    Qt,
    Signal,
)

from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import (
    DECISION_HELP,
    DECISIONS,
    STRICTNESS,
    InvalidRuleError,
    PermissionRule,
)
from app.ui.models.base import Index, RowsTableModel
from app.ui.tones import Tone, tone

DECISION_ORDER: tuple[str, ...] = tuple(sorted(DECISIONS, key=lambda d: STRICTNESS.get(d, 99)))


class RulesTableModel(RowsTableModel[PermissionRule]):
    COL_PRIORITY, COL_SERVER, COL_TOOL, COL_TOOL_PATTERN, COL_INPUT_PATTERN, COL_DECISION, \
        COL_FLOW, COL_DESCRIPTION = range(8)
    HEADERS = ("Priority", "Server", "Tool", "Tool pattern", "Input pattern", "Decision",
               "Flow guard", "Description")
    FIELDS = ("priority", "server_id", "tool_name", "tool_pattern", "input_pattern", "decision",
              "ignore_flow", "description")
    IGNORES_FLOW_TEXT = "⚠ ignored"
    IGNORES_FLOW_TIP = ("This allow rule ignores the flow guard: it allows calls that send data "
                        "out even after the conversation has read secrets, and reads of "
                        "sensitive paths, without asking. Untick to let the guard ask again.")
    RuleRole = Qt.ItemDataRole.UserRole + 1
    RuleIdRole = Qt.ItemDataRole.UserRole + 2

    edit_failed = Signal(str)
    _changed_elsewhere = Signal()

    _DECISION_TONES: ClassVar[dict[str, Tone]] = {
        "allow": Tone.SUCCESS, "review": Tone.REVIEW, "ask": Tone.WARNING, "deny": Tone.DANGER}

    def __init__(self, repository: RuleRepository, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.repository = repository
        self._rows: list[PermissionRule] = repository.list()
        # Repository listeners may fire on any thread; hop to ours through a queued signal.
        self._changed_elsewhere.connect(self.reload, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe = repository.changes.subscribe(self._changed_elsewhere.emit)
        self.destroyed.connect(lambda *_: self._unsubscribe())

    # -- read ------------------------------------------------------------------------------

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        rule = self.row_for(index)
        if rule is None:
            return None
        column = index.column()
        if column == self.COL_FLOW:
            return self._flow_data(rule, role)
        value = getattr(rule, self.FIELDS[column])
        if role == Qt.ItemDataRole.DisplayRole:
            if value is None:
                return "any" if column in (self.COL_SERVER, self.COL_TOOL) and \
                    not (column == self.COL_TOOL and rule.tool_pattern) else ""
            return str(value)
        if role == Qt.ItemDataRole.EditRole:
            return value if value is not None else ""
        if role == Qt.ItemDataRole.ForegroundRole:
            if column == self.COL_DECISION:
                return tone(self._DECISION_TONES.get(rule.decision, Tone.MUTED)).text
            if value is None:
                return tone(Tone.MUTED).text
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == self.COL_DECISION and rule.decision in DECISION_HELP:
                return f"{rule.summary()}\n{rule.decision}: {DECISION_HELP[rule.decision]}"
            return rule.summary()
        if role == Qt.ItemDataRole.TextAlignmentRole and column == self.COL_PRIORITY:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == self.RuleRole:
            return rule
        if role == self.RuleIdRole:
            return rule.id
        return None

    def _flow_data(self, rule: PermissionRule, role: int) -> Any:
        """The "Flow guard" column: empty, or a warning for a rule that ignores the guard."""
        active = rule.ignore_flow and rule.decision == "allow"
        if role == Qt.ItemDataRole.DisplayRole:
            if not rule.ignore_flow:
                return ""
            return self.IGNORES_FLOW_TEXT if active else "ignored (no effect)"
        if role == Qt.ItemDataRole.CheckStateRole and rule.ignore_flow:
            return Qt.CheckState.Checked
        if role == Qt.ItemDataRole.ForegroundRole and rule.ignore_flow:
            # An active one is drawn on the caution surface (below): its text goes with it.
            return tone(Tone.CAUTION).on_surface if active else tone(Tone.MUTED).text
        if role == Qt.ItemDataRole.BackgroundRole and active:
            return tone(Tone.CAUTION).surface
        if role == Qt.ItemDataRole.ToolTipRole:
            if active:
                return self.IGNORES_FLOW_TIP
            if rule.ignore_flow:
                return ("Set to ignore the flow guard, which only matters for an allow rule. "
                        "Untick to clear it.")
            return ("The flow guard applies (set \"Ignore the flow guard\" in the rule editor "
                    "to opt an allow rule out).")
        if role == self.RuleRole:
            return rule
        if role == self.RuleIdRole:
            return rule.id
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == self.COL_FLOW:
            rule = self.row_for(index)
            # Switched off here; switched on only in the editor, with its warning.
            return base | Qt.ItemFlag.ItemIsUserCheckable \
                if rule is not None and rule.ignore_flow else base
        return base | Qt.ItemFlag.ItemIsEditable

    def rule_at(self, row: int) -> PermissionRule:
        return self._rows[row]

    def row_of(self, rule_id: int) -> int:
        for row, rule in enumerate(self._rows):
            if rule.id == rule_id:
                return row
        return -1

    # -- write -----------------------------------------------------------------------------

    def setData(self, index: Index, value: Any,
                role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid():
            return False
        if index.column() == self.COL_FLOW:
            return self._set_flow(index, value, role)
        if role != Qt.ItemDataRole.EditRole:
            return False
        field = self.FIELDS[index.column()]
        rule = self._rows[index.row()]
        if field == "priority":
            try:
                value = int(str(value).strip())
            except ValueError:
                self.edit_failed.emit(f"Priority must be a whole number, not {value!r}.")
                return False
        elif field == "decision":
            value = str(value).strip().lower()
            if value not in DECISIONS:
                self.edit_failed.emit(f"Decision must be one of {', '.join(DECISIONS)}.")
                return False
        elif isinstance(value, str):
            value = value.strip() if field != "input_pattern" else value
            value = value or None if field != "description" else value
        if getattr(rule, field) == value:
            return False
        try:
            assert rule.id is not None
            self.repository.update(rule.id, **{field: value})
        except InvalidRuleError as exc:
            self.edit_failed.emit(f"Not saved: {exc}.")
            return False
        self.reload()
        return True

    def _set_flow(self, index: Index, value: Any, role: int) -> bool:
        """Unticking clears ``ignore_flow``; it is never set from the table."""
        rule = self._rows[index.row()]
        if role != Qt.ItemDataRole.CheckStateRole or not rule.ignore_flow:
            return False
        checked = value in (Qt.CheckState.Checked, Qt.CheckState.Checked.value)
        if checked:
            return False
        try:
            assert rule.id is not None
            self.repository.update(rule.id, ignore_flow=False)
        except InvalidRuleError as exc:
            self.edit_failed.emit(f"Not saved: {exc}.")
            return False
        self.reload()
        return True

    def add_rule(self, rule: PermissionRule) -> int:
        """Add through the repository; returns the new row (or raises InvalidRuleError)."""
        added = self.repository.add(rule)
        self.reload()
        assert added.id is not None
        return self.row_of(added.id)

    def delete_rows(self, rows: list[int]) -> None:
        for rule_id in [self._rows[r].id for r in sorted(set(rows))]:
            assert rule_id is not None
            self.repository.delete(rule_id)
        self.reload()

    def reload(self) -> None:
        rules = self.repository.list()
        if rules == self._rows:
            return
        self.beginResetModel()
        self._rows = rules
        self.endResetModel()
