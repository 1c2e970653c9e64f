"""Settings → Permission rules: the rule table, its editor, import/export and the "test a call"
box that shows which rule decides — in a chosen permission mode, and as if the conversation had
read something sensitive or untrusted (simulated flow labels), so the person sees what the mode
and the flow guard would do."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.core.permission_mode import PermissionMode
from app.core.permissions.call_check import (
    CallInputError,
    LineRole,
    check_call,
    parse_call_input,
    simulated_flow,
)
from app.core.permissions.flow_labels import FlowLabel
from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import InvalidRuleError
from app.core.permissions.service import DecisionContext
from app.core.services import (
    Services,
)
from app.core.visible_text import make_visible
from app.ui.dialogs.rule_editor import RuleEditorDialog, add_decisions
from app.ui.markup import escape
from app.ui.models.rules_model import RulesTableModel
from app.ui.tones import Tone, span, text_span, view_check_boxes


class _DecisionDelegate(QStyledItemDelegate):
    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem,
                     index: QModelIndex | QPersistentModelIndex) -> QWidget:
        combo = QComboBox(parent)
        add_decisions(combo)
        return combo

    def setEditorData(self, editor: QWidget,
                      index: QModelIndex | QPersistentModelIndex) -> None:
        assert isinstance(editor, QComboBox)
        editor.setCurrentText(str(index.data(Qt.ItemDataRole.EditRole)))

    def setModelData(self, editor: QWidget, model: QAbstractItemModel,
                     index: QModelIndex | QPersistentModelIndex) -> None:
        assert isinstance(editor, QComboBox)
        model.setData(index, editor.currentText(), Qt.ItemDataRole.EditRole)


class RulesTab(QWidget):
    def __init__(self, services: Services, parent: QWidget | None = None,
                 profile_id: int | None = None) -> None:
        """``profile_id``: the current agent profile, whose permission mode the tester
        starts with."""
        super().__init__(parent)
        self.services = services
        self.profile_id = profile_id
        self.model = RulesTableModel(services.permissions.rules, self)
        self.table = QTableView()
        self.table.setObjectName("rules-table")
        view_check_boxes(self.table)  # the rules' Enabled boxes
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked |
                                   QAbstractItemView.EditTrigger.EditKeyPressed |
                                   QAbstractItemView.EditTrigger.SelectedClicked)
        self.table.setItemDelegateForColumn(RulesTableModel.COL_DECISION,
                                            _DecisionDelegate(self.table))
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(RulesTableModel.COL_DESCRIPTION, QHeaderView.ResizeMode.Stretch)
        self.table.setAlternatingRowColors(True)

        self.add_button = QPushButton("Add rule…")
        self.delete_button = QPushButton("Delete")
        self.delete_button.setShortcut(QKeySequence.StandardKey.Delete)
        self.import_button = QPushButton("Import…")
        self.export_button = QPushButton("Export…")
        toolbar = QHBoxLayout()
        for button in (self.add_button, self.delete_button):
            toolbar.addWidget(button)
        toolbar.addStretch(1)
        toolbar.addWidget(self.import_button)
        toolbar.addWidget(self.export_button)

        self.status = QLabel("Changes take effect immediately.")
        self.status.setObjectName("rules-status")
        self.model.edit_failed.connect(self._show_error)

        layout = QVBoxLayout(self)
        layout.addLayout(toolbar)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        layout.addWidget(self._build_tester())

        self.add_button.clicked.connect(self.add_rule)
        self.delete_button.clicked.connect(self.delete_selected)
        self.import_button.clicked.connect(self.import_rules)
        self.export_button.clicked.connect(self.export_rules)

    # -- test a call ---------------------------------------------------------------------

    def _build_tester(self) -> QGroupBox:
        box = QGroupBox("Test a call")
        form = QFormLayout(box)
        self.test_server = QLineEdit("builtin")
        self.test_tool = QComboBox()
        self.test_tool.setEditable(True)
        self.test_tool.addItems(sorted(self.services.registry.names()))
        self.test_input = QPlainTextEdit('{"command": "git status && rm -rf build"}')
        self.test_input.setMaximumHeight(70)
        self.test_mode = QComboBox()
        self.test_mode.setObjectName("test-mode")
        for mode in PermissionMode:
            self.test_mode.addItem(mode.label, mode.value)
            self.test_mode.setItemData(self.test_mode.count() - 1, mode.description,
                                       Qt.ItemDataRole.ToolTipRole)
        self.test_mode.setCurrentIndex(self.test_mode.findData(self._profile_mode().value))
        self.test_labels: dict[FlowLabel, QCheckBox] = {}
        simulate = QHBoxLayout()
        simulate.addWidget(self.test_mode)
        simulate.addSpacing(8)
        simulate.addWidget(QLabel("as if the conversation had:"))
        for label in FlowLabel.by_seriousness():
            check = QCheckBox(label.label)
            check.setObjectName(f"test-flow-{label.value}")
            self.test_labels[label] = check
            simulate.addWidget(check)
            check.toggled.connect(self._test_input_changed)
        simulate.addStretch(1)
        self.test_button = QPushButton("Decide")
        self.test_result = QLabel()
        self.test_result.setObjectName("test-result")
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row = QHBoxLayout()
        row.addWidget(self.test_server)
        row.addWidget(self.test_tool, 1)
        row.addWidget(self.test_button)
        form.addRow("Server / tool", row)
        form.addRow("Input JSON", self.test_input)
        form.addRow("Mode", simulate)
        form.addRow("Result", self.test_result)
        self.test_button.clicked.connect(self.run_test)
        self._test_generation = 0
        self._test_task: asyncio.Future[None] | None = None
        self.test_input.textChanged.connect(self._test_input_changed)
        self.test_server.textChanged.connect(self._test_input_changed)
        self.test_tool.currentTextChanged.connect(self._test_input_changed)
        self.test_mode.currentIndexChanged.connect(self._test_input_changed)
        # A shown answer names rules: after any change to them (added, edited, deleted, here
        # or elsewhere) it is decided again, never left naming a rule that is gone.
        for signal in (self.model.modelReset, self.model.dataChanged, self.model.rowsInserted,
                       self.model.rowsRemoved):
            signal.connect(self._rules_changed)
        if "shell_exec" in self.services.registry.names():
            self.test_tool.setCurrentText("shell_exec")
        return box

    def run_test(self) -> None:
        """Decide the call in a worker thread: subjects come from parsers (tree-sitter for
        shell) that must not run on the GUI thread; the answer is shown when it arrives."""
        self._test_generation += 1
        generation = self._test_generation
        call = (self.test_server.text().strip(), self.test_tool.currentText().strip(),
                self.test_input.toPlainText(), self.test_context())
        self.test_result.setText("Deciding…")
        self._test_task = asyncio.ensure_future(self._decide_in_worker(generation, *call))

    def _profile_mode(self) -> PermissionMode:
        if self.profile_id is None:
            return PermissionMode.ASK
        try:
            return self.services.profiles.get(self.profile_id).permission_mode
        except KeyError:
            return PermissionMode.ASK

    def test_context(self) -> DecisionContext:
        """The chosen mode and simulated flow labels, for ``decide``; checkpoints as the open
        project has them (auto mode needs them to call a change reversible)."""
        flow = simulated_flow(label for label, check in self.test_labels.items()
                              if check.isChecked())
        project_root = self.services.permissions.project_root
        checkpoints = project_root is not None and \
            self.services.checkpointer_for(project_root) is not None
        return DecisionContext(mode=PermissionMode.parse(self.test_mode.currentData()),
                               flow=flow, checkpoints=checkpoints)

    def _rules_changed(self, *_args: object) -> None:
        if self.test_result.text():
            self.run_test()

    def _test_input_changed(self) -> None:
        """A result still on its way (or shown) is for the old input: drop it."""
        self._test_generation += 1
        if self.test_result.text():
            self.test_result.setText("")

    async def _decide_in_worker(self, generation: int, server: str, tool: str,
                                text: str, context: DecisionContext | None = None) -> None:
        try:
            html, rule_id = await asyncio.to_thread(_explain_call, self.services, server, tool,
                                                    text, context, _html())
        except Exception as exc:  # say what went wrong rather than leave "Deciding…"
            html, rule_id = f"Could not decide: {escape(make_visible(str(exc)))}", None
        if generation != self._test_generation:
            return  # the input changed while deciding: this answer is about another call
        self.test_result.setText(html)
        if rule_id is not None:
            row = self.model.row_of(rule_id)
            if row >= 0:
                self.table.selectRow(row)

    # -- editing -----------------------------------------------------------------------------

    def add_rule(self) -> None:
        dialog = RuleEditorDialog(self.services.registry.names(), self)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)

        def done(code: int) -> None:
            rule = dialog.rule()
            if code == QDialog.DialogCode.Accepted and rule is not None:
                try:
                    row = self.model.add_rule(rule)
                except InvalidRuleError as exc:
                    self._show_error(str(exc))
                    return
                self.table.selectRow(row)
                self.status.setText("Rule added; it applies to the next call.")
            dialog.deleteLater()

        dialog.finished.connect(done)
        dialog.open()

    def delete_selected(self) -> None:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        if not rows:
            return
        summaries = "\n".join(self.model.rule_at(r).summary() for r in rows[:5])
        box = QMessageBox(QMessageBox.Icon.Warning, "Delete rules",
                          f"Delete {len(rows)} rule(s)?\n\n{summaries}",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)

        def done(_code: int) -> None:
            if box.clickedButton() is box.button(QMessageBox.StandardButton.Yes):
                self.model.delete_rows(rows)
                self.status.setText(f"Deleted {len(rows)} rule(s).")
            box.deleteLater()

        box.finished.connect(done)
        box.open()

    def import_rules(self, path: str | None = None) -> None:
        if not path:
            path, _ = QFileDialog.getOpenFileName(self, "Import rules", "", "JSON (*.json)")
        if not path:
            return
        try:
            rules = RuleRepository.parse_json(Path(path).read_text(encoding="utf-8"))
        except (OSError, InvalidRuleError) as exc:
            self._show_error(f"Not imported: {exc}")
            return
        self.services.permissions.rules.replace_all(rules)
        self.model.reload()
        self.status.setText(f"Imported {len(rules)} rules from {path}.")

    def export_rules(self, path: str | None = None) -> None:
        if not path:
            path, _ = QFileDialog.getSaveFileName(self, "Export rules", "tebiki-rules.json",
                                                  "JSON (*.json)")
        if not path:
            return
        Path(path).write_text(self.services.permissions.rules.export_json(), encoding="utf-8")
        self.status.setText(f"Exported to {path}.")

    def _show_error(self, message: str) -> None:
        self.status.setText(text_span(Tone.DANGER, message))


def _html() -> dict[LineRole, str]:
    """How each line of a check looks here (app.core.permissions.call_check.CheckLine.render),
    in the palette's tones of the moment."""
    return {
        "verdict": "<b>{lead}</b> — {text}",
        "note": span(Tone.REVIEW, "{lead}"),
        "guard": span(Tone.DANGER, "⚠ <b>{lead}</b> {text}"),
        "subject": "&nbsp;&nbsp;• <code>{lead}</code> → {text}",
    }


def _explain_call(services: Services, server: str, tool: str, text: str,
                  context: DecisionContext | None, html: dict[LineRole, str],
                  ) -> tuple[str, int | None]:
    """(HTML explaining the decision, id of the deciding rule); runs in a worker thread, so
    the lines' ``html`` (their tones read from the palette) is made by the caller.
    The lines are app.core.permissions.call_check's, shared with the command line."""
    try:
        tool_input = parse_call_input(text)
    except CallInputError as exc:
        return escape(str(exc)), None
    check = check_call(services.permissions, server, tool, tool_input, context)
    return "<br>".join(line.render(html, escape) for line in check.lines()), check.rule_id
