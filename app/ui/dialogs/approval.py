"""The approval dialog: one pending tool call, shown for the person to approve or decline.

The dialog is window-modal and opened with ``open()`` by ``app.ui.approval_queue``, which shows
one at a time; callers await a future that the dialog's ``finished`` signal resolves (never
``exec()`` inside a coroutine). Closing the dialog, Stop, or quitting resolves it as Decline,
so an unapproved call can never run.

Everything shown from the call's input (JSON, command text, diff, file names, the commands a
rule would allow) passes through ``make_visible``: an ANSI escape, a ``\r`` or a bidi override
in the input must not change what the person reads compared with what runs.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.agent.events import ApprovalRequest, ApprovalResponse
from app.core.permissions.rules import PermissionRule
from app.core.permissions.suggestions import RuleSuggestion, suggest_allow_rules
from app.core.tools.base import RiskLevel
from app.core.visible_text import make_visible
from app.ui.widgets.badges import badge
from app.ui.widgets.highlighters import DiffHighlighter, JsonHighlighter

_HIGH_RISK_WARNING = {
    "file_system": "This tool changes files on your computer.",
    "execution": "This tool runs programs on your computer.",
    "version_control": "This tool can change your git repository.",
    "composite": "This tool runs several commands on your computer.",
}


def _code_view(text: str, highlighter: type | None = None) -> QPlainTextEdit:
    view = QPlainTextEdit(make_visible(text))
    view.setReadOnly(True)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    if highlighter is not None:
        view._highlighter = highlighter(view.document())  # type: ignore[attr-defined]
    return view


def _why_text(request: ApprovalRequest) -> str:
    decision = request.decision
    rule = decision.rule
    if rule is None:
        text = "No permission rule matches this call, so Tebiki asks you (the safe default)."
    else:
        label = make_visible(rule.description or rule.summary())
        text = (f"Asked because of rule #{rule.id}: <i>{_escape(label)}</i> "
                f"<span style='color:palette(placeholder-text)'>({_escape(rule.summary())})"
                "</span>")
    if decision.note:
        text += f"<br>{_escape(decision.note)}"
    return text


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _visible_json(value: Any) -> Any:
    """``value`` with every string (keys too) made visible, so the JSON view shows the same
    markers as the other views rather than JSON escapes for some characters and raw bidi or
    zero-width characters for others."""
    if isinstance(value, str):
        return make_visible(value)
    if isinstance(value, dict):
        return {make_visible(str(k)): _visible_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_visible_json(v) for v in value]
    return value


def _suggestion_details(suggestion: RuleSuggestion) -> str:
    lines = [f"• {item}" for item in suggestion.items]
    lines.append(suggestion.also_matches)
    return make_visible("\n".join(lines))


class ApprovalDialog(QDialog):
    """Shows one pending tool call. ``response()`` says what the person chose."""

    def __init__(self, request: ApprovalRequest, parent: QWidget | None = None,
                 working_dir=None) -> None:
        super().__init__(parent)
        self.request = request
        self.setWindowTitle(f"Approve {request.tool_name}?")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.setMinimumSize(640, 480)
        self._suggestions: list[RuleSuggestion] = suggest_allow_rules(
            request.server_id, request.tool_name, request.input, request.spec, working_dir,
            request.decision)

        layout = QVBoxLayout(self)
        layout.setSpacing(10)

        title = QLabel(f"<span style='font-size:15px'>The AI wants to run "
                       f"<b>{_escape(make_visible(request.tool_name))}</b></span>")
        title.setObjectName("approval-title")
        header = QHBoxLayout()
        header.addWidget(title)
        header.addStretch(1)
        header.addWidget(badge(f"server: {make_visible(request.server_id)}", "neutral",
                               "Tool server id"))
        spec = request.spec
        if spec is not None:
            header.addWidget(badge(spec.category.value.replace("_", " "), "neutral"))
            header.addWidget(badge(f"{spec.risk.value} risk",
                                   "high" if spec.risk == RiskLevel.HIGH else "low"))
        layout.addLayout(header)

        why = QLabel(_why_text(request))
        why.setObjectName("approval-why")
        why.setWordWrap(True)
        layout.addWidget(why)

        if spec is not None and spec.risk == RiskLevel.HIGH:
            warning = QLabel("⚠ " + _HIGH_RISK_WARNING.get(
                spec.category.value, "This tool can make changes.") +
                " Check the details before approving.")
            warning.setObjectName("approval-warning")
            warning.setWordWrap(True)
            warning.setStyleSheet("QLabel { background: #fff8c5; color: #4d2d00; border: 1px solid "
                                  "#d4a72c; border-radius: 6px; padding: 6px; }")
            layout.addWidget(warning)

        self.tabs = QTabWidget()
        if request.preview:
            self.diff_view = _code_view(request.preview, DiffHighlighter)
            self.tabs.addTab(self.diff_view, "Changes")
        parts = self._command_parts()
        if parts and request.spec is not None:
            self.command_view = _code_view("\n".join(parts))
            self.tabs.addTab(self.command_view, f"{request.spec.subjects_heading} ({len(parts)})")
        elif isinstance(request.input.get("command"), str):
            # Not split into parts (not understood): still show exactly what would run.
            self.command_view = _code_view(request.input["command"])
            self.tabs.addTab(self.command_view, "Command")
        self.input_view = _code_view(
            json.dumps(_visible_json(request.input), indent=2, ensure_ascii=False,
                       sort_keys=True),
            JsonHighlighter)
        self.tabs.addTab(self.input_view, "Input (JSON)")
        layout.addWidget(self.tabs, 1)

        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        layout.addWidget(line)

        remember_row = QHBoxLayout()
        self.remember = QCheckBox("Remember:")
        self.remember_choice = QComboBox()
        for suggestion in self._suggestions:
            self.remember_choice.addItem(make_visible(suggestion.label))
        self.remember_choice.setEnabled(False)
        self.remember.toggled.connect(self.remember_choice.setEnabled)
        remember_row.addWidget(self.remember)
        remember_row.addWidget(self.remember_choice, 1)
        layout.addLayout(remember_row)
        # What the chosen rule would also allow, visible before the box is ticked.
        self.also_matches = QLabel()
        self.also_matches.setObjectName("approval-also-matches")
        self.also_matches.setTextFormat(Qt.TextFormat.PlainText)
        self.also_matches.setWordWrap(True)
        self.also_matches.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.also_matches)
        self.remember_choice.currentIndexChanged.connect(self._show_also_matches)
        if not self._suggestions:
            self.remember.setEnabled(False)
            self.also_matches.setText("No rule can be offered for this call: it is only "
                                      "approved once.")
        self._show_also_matches(self.remember_choice.currentIndex())

        self.reason = QLineEdit()
        self.reason.setPlaceholderText("Reason or instructions for the AI if you decline "
                                       "(optional)")
        layout.addWidget(self.reason)

        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.decline_button = QPushButton("Decline")
        self.approve_button = QPushButton("Approve")
        self.approve_button.setObjectName("approve")
        self.decline_button.setAutoDefault(False)
        self.approve_button.setAutoDefault(False)
        buttons.addWidget(self.decline_button)
        buttons.addWidget(self.approve_button)
        layout.addLayout(buttons)
        self.decline_button.clicked.connect(self.reject)
        self.approve_button.clicked.connect(self.accept)
        # Ctrl+Enter approves deliberately; a bare Enter in the reason box declines.
        approve_shortcut = QShortcut(QKeySequence("Ctrl+Return"), self)
        approve_shortcut.activated.connect(self.accept)
        self.reason.returnPressed.connect(self.reject)

    def _show_also_matches(self, index: int) -> None:
        if 0 <= index < len(self._suggestions):
            self.also_matches.setText(_suggestion_details(self._suggestions[index]))

    def _command_parts(self) -> list[str]:
        """The call's subjects, for a tool whose spec says a person must read them
        (``subjects_heading``: e.g. each command of a shell chain)."""
        if self.request.spec is None or not self.request.spec.subjects_heading:
            return []
        try:
            return self.request.spec.subjects(self.request.input, None)
        except Exception:
            return []

    def response(self) -> ApprovalResponse:
        approved = self.result() == QDialog.DialogCode.Accepted
        rules: tuple[PermissionRule, ...] = ()
        if approved and self.remember.isChecked() and self._suggestions:
            rules = self._suggestions[self.remember_choice.currentIndex()].rules
        return ApprovalResponse(approved=approved, reason=self.reason.text().strip(),
                                remember_rule=rules[0] if rules else None,
                                more_rules=tuple(rules[1:]))
