"""A form to create a permission rule, validated by the same code as the repository.

An allow rule may opt out of the flow guard ("Ignore the flow guard"): it then allows calls that
send data out even after the conversation has read a secret. The box is offered only for allow
rules (the guard only ever raises an allow) and says what it gives up.

The decision ``review`` sends a matching call to the reviewer models (Settings → Review) first:
only their unanimous approval runs it; otherwise the person is asked (or the model is told
why they rejected it)."""

from __future__ import annotations

import functools

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.permissions.rules import (
    DECISION_HELP,
    InvalidRuleError,
    PermissionRule,
    validate_rule,
)
from app.ui.models.rules_model import DECISION_ORDER
from app.ui.tones import Tone, callout_style, follow_palette, tone_text

IGNORE_FLOW_WARNING = (
    "⚠ With this, the rule allows calls that send data out (web requests, commands with "
    "network, MCP tools) even after the conversation has read secrets such as keys, "
    "credentials or .env files, and reads of sensitive paths without asking. Use it only for "
    "destinations you fully trust.")
_HINT_STYLE = ("QLabel { color: palette(placeholder-text); border: 1px solid transparent; "
               "padding: 6px; }")


def add_decisions(combo: QComboBox) -> None:
    """Fill a decision combo (in order of strictness), each decision's help as its tooltip."""
    for decision in DECISION_ORDER:
        combo.addItem(decision, decision)
        combo.setItemData(combo.count() - 1, DECISION_HELP.get(decision, ""),
                          Qt.ItemDataRole.ToolTipRole)


class RuleEditorDialog(QDialog):
    def __init__(self, tool_names: list[str], parent: QWidget | None = None,
                 initial: PermissionRule | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New permission rule")
        self.setMinimumWidth(480)
        self._rule: PermissionRule | None = None
        initial = initial or PermissionRule(decision="ask", priority=10)

        form = QFormLayout()
        self.server = QLineEdit(initial.server_id or "")
        self.server.setPlaceholderText("any server (e.g. builtin, or an MCP server name)")
        self.tool = QComboBox()
        self.tool.setEditable(True)
        self.tool.addItems(["", *sorted(tool_names)])
        self.tool.setCurrentText(initial.tool_name or "")
        if (tool_line := self.tool.lineEdit()) is not None:  # always, once editable
            tool_line.setPlaceholderText("exact tool name (case-sensitive)")
        self.tool_pattern = QLineEdit(initial.tool_pattern or "")
        self.tool_pattern.setPlaceholderText("or a wildcard like git_* (case-insensitive)")
        self.input_pattern = QLineEdit(initial.input_pattern or "")
        self.input_pattern.setPlaceholderText("e.g. git status*  ·  doc/**  ·  *.python.org")
        self.decision = QComboBox()
        self.decision.setObjectName("rule-decision")
        add_decisions(self.decision)
        self.decision.setCurrentText(initial.decision)
        self.decision_help = QLabel()
        self.decision_help.setObjectName("rule-decision-help")
        self.decision_help.setWordWrap(True)
        self.decision_help.setStyleSheet("color: palette(placeholder-text); font-size: 11px;")
        self.priority = QSpinBox()
        self.priority.setRange(-1_000_000, 1_000_000)
        self.priority.setValue(initial.priority)
        self.description = QLineEdit(initial.description)
        self.ignore_flow = QCheckBox("Ignore the flow guard")
        self.ignore_flow.setObjectName("rule-ignore-flow")
        self.ignore_flow.setChecked(initial.ignore_flow and initial.decision == "allow")
        self.ignore_flow_warning = QLabel(IGNORE_FLOW_WARNING)
        self.ignore_flow_warning.setObjectName("rule-ignore-flow-warning")
        self.ignore_flow_warning.setWordWrap(True)
        form.addRow("Server", self.server)
        form.addRow("Tool", self.tool)
        form.addRow("Tool pattern", self.tool_pattern)
        form.addRow("Input pattern", self.input_pattern)
        form.addRow("Decision", self.decision)
        form.addRow("", self.decision_help)
        form.addRow("Priority", self.priority)
        form.addRow("Description", self.description)
        form.addRow("Flow guard", self.ignore_flow)

        help_text = QLabel("Higher priority is evaluated first; at equal priority deny beats ask "
                           "beats review beats allow. The input pattern is matched against "
                           "each part of the "
                           "call (each command of a shell chain, the resolved file path, the "
                           "URL host); the strictest part decides.")
        help_text.setWordWrap(True)
        help_text.setStyleSheet("color: palette(placeholder-text);")
        self.error = QLabel()
        self.error.setObjectName("rule-error")
        tone_text(self.error, Tone.DANGER)
        self.error.setWordWrap(True)
        self.error.hide()

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok |
                                   QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._try_accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.ignore_flow_warning)
        layout.addWidget(help_text)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.decision.currentTextChanged.connect(self._update_ignore_flow)
        self.decision.currentTextChanged.connect(self._update_decision_help)
        self._update_decision_help(self.decision.currentText())
        self.ignore_flow.toggled.connect(self._update_ignore_flow)
        self._update_ignore_flow()

    def _update_decision_help(self, decision: str) -> None:
        self.decision_help.setText(DECISION_HELP.get(decision, ""))

    def _update_ignore_flow(self) -> None:
        """Only an allow rule can ignore the guard; checked, the warning stands out."""
        allow = self.decision.currentText() == "allow"
        if not allow:
            self.ignore_flow.setChecked(False)
        self.ignore_flow.setEnabled(allow)
        self.ignore_flow.setToolTip(IGNORE_FLOW_WARNING if allow else
                                    "Only an allow rule can ignore the flow guard: the guard "
                                    "only ever turns an allow into an ask.")
        self.ignore_flow_warning.setVisible(allow)
        follow_palette(self.ignore_flow_warning, functools.partial(callout_style, Tone.CAUTION)
                       if self.ignore_flow.isChecked() else _HINT_STYLE)

    def rule(self) -> PermissionRule | None:
        return self._rule

    def _try_accept(self) -> None:
        try:
            self._rule = validate_rule(PermissionRule(
                decision=self.decision.currentText(),  # type: ignore[arg-type]
                server_id=self.server.text().strip() or None,
                tool_name=self.tool.currentText().strip() or None,
                tool_pattern=self.tool_pattern.text().strip() or None,
                input_pattern=self.input_pattern.text() or None,
                priority=self.priority.value(),
                description=self.description.text().strip(),
                ignore_flow=self.ignore_flow.isChecked() and
                self.decision.currentText() == "allow",
            ))
        except InvalidRuleError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        self.accept()
