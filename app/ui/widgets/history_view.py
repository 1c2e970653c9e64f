"""Tool history: every call with its decision, who decided and outcome; a details pane shows
input/output and, for a call the reviewer models saw, their reviews."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.core.store.audit import AuditRepository
from app.core.visible_text import make_visible
from app.ui.models.history_model import HistoryTableModel, decided_by, who_decided


class HistoryView(QWidget):
    def __init__(self, audit: AuditRepository, tool_names: list[str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = HistoryTableModel(audit, self)
        self.tool = QComboBox()
        self.tool.addItem("All tools", None)
        for name in sorted(tool_names):
            self.tool.addItem(name, name)
        # As wide as a usual tool name: a long one (an MCP server's) must not widen the window.
        self.tool.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.tool.setMinimumContentsLength(12)
        self.decision = QComboBox()
        # By what the rules said; the column shows what then happened (approved by you, …).
        for label, value in (("Any decision", None), ("Rules allowed", "allow"),
                             ("Rules asked you", "ask"), ("Rules denied", "deny")):
            self.decision.addItem(label, value)
        self.errors = QCheckBox("Errors only")
        refresh = QPushButton("Refresh")
        filters = QHBoxLayout()
        for widget in (self.tool, self.decision, self.errors):
            filters.addWidget(widget)
        filters.addStretch(1)
        filters.addWidget(refresh)

        self.table = QTableView()
        self.table.setObjectName("history-table")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setTabKeyNavigation(False)  # arrows move between rows; Tab leaves
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.details.setPlaceholderText("Select a call to see its input and result.")
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.details)
        splitter.setSizes([300, 200])
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(splitter, 1)

        for combo in (self.tool, self.decision):
            combo.currentIndexChanged.connect(self._apply_filters)
        self.errors.toggled.connect(self._apply_filters)
        refresh.clicked.connect(self.model.reload)
        self.table.selectionModel().currentRowChanged.connect(
            lambda current, _previous: self._show_details(current.row()))

    def _apply_filters(self) -> None:
        self.model.set_filters(tool=self.tool.currentData(), decision=self.decision.currentData(),
                               errors_only=self.errors.isChecked())
        self.details.clear()

    def _show_details(self, row: int) -> None:
        if row < 0 or row >= self.model.rowCount():
            self.details.clear()
            return
        e = self.model.execution_at(row)
        self.details.setPlainText(
            f"{e.tool_name} on {e.server_id} at {e.created_at}\n"
            f"who decided: {who_decided(e)}   outcome: {e.result_text}   rule: "
            f"{'#' + str(e.rule_id) if e.rule_id else 'none'}   "
            f"duration: {e.duration_ms if e.duration_ms is not None else '-'} ms   "
            f"error: {'yes' if e.is_error else 'no'}\n"
            f"the rules said: {e.decision}\n"
            f"decided by: {make_visible(decided_by(e)) or '-'}\n\n"
            f"{_reviews_block(e.reviews)}"
            f"input:\n{make_visible(json.dumps(e.input, indent=2, ensure_ascii=False))}\n\n"
            f"output:\n{make_visible(e.output or '')}")  # what a person reads is what ran


def _reviews_block(reviews: object) -> str:
    """The reviewers' verdicts (the stored quorum result), then a blank line; '' if none."""
    if not isinstance(reviews, dict):
        return ""
    from app.ui.widgets.review_panel import reviews_text  # only once a reviewed call is shown

    text = reviews_text(reviews)
    return f"{text}\n\n" if text else ""
