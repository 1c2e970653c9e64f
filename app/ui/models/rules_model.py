"""Table model over the permission rules; edits go through the repository and apply at once."""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import (
    QObject,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor

from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import DECISIONS, InvalidRuleError, PermissionRule
from app.ui.models.base import Index, RowsTableModel


class RulesTableModel(RowsTableModel[PermissionRule]):
    COL_PRIORITY, COL_SERVER, COL_TOOL, COL_TOOL_PATTERN, COL_INPUT_PATTERN, COL_DECISION, \
        COL_DESCRIPTION = range(7)
    HEADERS = ("Priority", "Server", "Tool", "Tool pattern", "Input pattern", "Decision",
               "Description")
    FIELDS = ("priority", "server_id", "tool_name", "tool_pattern", "input_pattern", "decision",
              "description")
    RuleRole = Qt.ItemDataRole.UserRole + 1
    RuleIdRole = Qt.ItemDataRole.UserRole + 2

    edit_failed = Signal(str)
    _changed_elsewhere = Signal()

    _DECISION_COLOURS: ClassVar[dict[str, str]] = {
        "allow": "#1a7f37", "ask": "#9a6700", "deny": "#cf222e"}

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
                return QColor(self._DECISION_COLOURS[rule.decision])
            if value is None:
                return QColor("#8c959f")
        if role == Qt.ItemDataRole.ToolTipRole:
            return rule.summary()
        if role == Qt.ItemDataRole.TextAlignmentRole and column == self.COL_PRIORITY:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == self.RuleRole:
            return rule
        if role == self.RuleIdRole:
            return rule.id
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable |
                Qt.ItemFlag.ItemIsEditable)

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
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
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
