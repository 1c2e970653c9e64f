"""The approval dialog: one pending tool call, shown for the person to approve or decline.

The dialog is not modal (a modal one would block the window's Stop, Ctrl+. and close button,
which must decline it) and is shown with ``show()`` by ``app.ui.approval_queue``, which shows
one at a time and says which of the waiting calls it is ("1 of 2", ``set_position``); callers
await a future that the dialog's ``finished`` signal resolves (never ``exec()`` inside a
coroutine). Closing the dialog, Stop, or quitting resolves it as Decline,
so an unapproved call can never run.

Everything shown from the call's input (JSON, command text, diff, file names, the commands a
rule would allow) passes through ``make_visible``: an ANSI escape, a ``\r`` or a bidi override
in the input must not change what the person reads compared with what runs.

When a guard raised the decision (the conversation read a secret and this call sends data out,
or the call touches a sensitive path), its reason comes first, warning-styled ("Why this asks:
…"); what decided (a rule, the permission mode and the facts it used, or a guard) is repeated
in small text under the explanation.

For a tool that starts programs, one line says whether they run in the OS sandbox and what the
sandbox lets them do ("Runs in the sandbox (bubblewrap): writes only inside the project folder,
no network"), or, warning-styled, why they do not. The caller passes the app's ``Sandbox`` and
the tool's saved config; without them (an older caller) the line is left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
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
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.agent.events import ApprovalRequest, ApprovalResponse
from app.core.permissions.rules import PermissionRule
from app.core.permissions.suggestions import RuleSuggestion, suggest_allow_rules
from app.core.sandbox import Sandbox
from app.core.services import Services
from app.core.tools.base import GitPermission, RiskLevel, ToolSpec
from app.core.tools.containment import program_containment
from app.core.visible_text import make_visible
from app.ui.markup import escape
from app.ui.widgets.badges import badge
from app.ui.widgets.highlighters import DiffHighlighter, JsonHighlighter
from app.ui.widgets.review_panel import ReviewsPanel

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
    # What decided, named: "auto mode", "flow guard", "sensitive path" (the details are in the
    # small "Decided by" line).
    decider = escape(make_visible(decision.decided_by.partition(":")[0].strip()))
    if rule is None and decider:
        text = f"No permission rule decides this call, so the {decider} decides: it asks you."
    elif rule is not None and decider and rule.decision != decision.kind:
        # A guard raised what the rule said (an allow rule, then a secret was read).
        label = make_visible(rule.description or rule.summary())
        text = (f"Rule #{rule.id} <i>{escape(label)}</i> would {rule.decision} this call, "
                f"but the {decider} asks you first.")
    elif rule is None:
        text = "No permission rule matches this call, so Tebiki asks you (the safe default)."
    elif rule.decision == "review":
        label = make_visible(rule.description or rule.summary())
        text = (f"Rule #{rule.id} <i>{escape(label)}</i> sends this call to the reviewers; "
                "they did not all approve, so you decide.")
    else:
        label = make_visible(rule.description or rule.summary())
        text = (f"Asked because of rule #{rule.id}: <i>{escape(label)}</i> "
                f"<span style='color:palette(placeholder-text)'>({escape(rule.summary())})"
                "</span>")
    if decision.note:
        text += f"<br>{escape(decision.note)}"
    return text


def _decided_by_text(request: ApprovalRequest) -> str:
    """Plain text: what decided, and the facts the permission mode looked at."""
    decision = request.decision
    rule = decision.rule
    why = decision.decided_by or (rule.summary() if rule is not None else
                                  "no rule matched (the safe default is ask)")
    text = f"Decided by: {why}"
    facts = decision.facts.describe() if decision.facts is not None else ""
    if facts and facts not in why:
        text += f" · This call: {facts}"
    return make_visible(text)


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


_SANDBOX_OK_STYLE = ("QLabel { background: #dafbe1; color: #0f5323; border: 1px solid #4ac26b; "
                     "border-radius: 6px; padding: 6px; }")
_FLOW_REASON_STYLE = ("QLabel { background: #ffebe9; color: #82071e; border: 1px solid #ff8182; "
                      "border-radius: 6px; padding: 8px; font-size: 13px; }")
_SANDBOX_WARNING_STYLE = ("QLabel { background: #fff1e5; color: #762c00; border: 1px solid "
                          "#fb8f44; border-radius: 6px; padding: 6px; }")


def _folder_text(entry: str, working_dir: Path | None) -> str:
    """How a write folder of the config reads: "the project folder", "build", "~/cache"."""
    if entry in (".", "./"):
        return "the project folder"
    path = Path(entry).expanduser()
    if not path.is_absolute():
        return entry
    if working_dir is not None and path == working_dir:
        return "the project folder"
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) and path != home else entry


def _and_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _config_value(spec: ToolSpec, config: Mapping[str, Any], key: str) -> Any:
    """A config field's value as the tool uses it (saved and valid, else its default)."""
    field = next((f for f in spec.config_fields if f.key == key), None)
    if field is None:
        return None
    parsed = field.parse(config[key]) if key in config else None
    return parsed if parsed is not None else field.default


def sandbox_line(spec: ToolSpec | None, tool_input: Mapping[str, Any], sandbox: Sandbox,
                 tool_config: Mapping[str, Any] | None = None,
                 working_dir: Path | None = None) -> tuple[str, bool] | None:
    """(the line, contained) for a call to a tool that starts programs; None for any other.

    What it says about writes and the network comes from the tool's declared settings
    (``write_folders``, ``network``, ``git_permission``) and from whether this call can change
    files at all; a tool that declares neither gets no claim it cannot back up."""
    if spec is None:
        return None
    found = program_containment(spec, sandbox)
    if not found.runs_programs:
        return None
    if not found.contained:
        return "⚠ " + found.label[:1].upper() + found.label[1:] + ".", False
    backend = sandbox.status.backend or "OS sandbox"
    config = tool_config or {}
    limits: list[str] = []
    folders = _config_value(spec, config, "write_folders")
    declared = spec.annotations.get("write_folders")
    if not spec.may_change_files(tool_input):
        limits.append("writes nowhere")
    elif folders is not None:
        shown = [_folder_text(str(f), working_dir) for f in folders]
        writes = "writes only inside " + _and_list(shown) if shown else "writes nowhere"
        git = _config_value(spec, config, "git_permission")
        if shown and git is not None and git != GitPermission.READ_WRITE.value:
            writes += " (.git stays read-only)"
        limits.append(writes)
    elif isinstance(declared, str) and declared:
        # A custom tool's own sandbox settings (its tools.toml entry), e.g. "(the project
        # folder)" or "(none)". Only reached for a sandboxed tool, never an MCP server's.
        limits.append("writes nowhere" if declared == "(none)" else
                      "writes only inside " + declared.strip("()"))
    network = _config_value(spec, config, "network")
    if network is None:
        network = spec.needs_network
    limits.append("network allowed" if network else "no network")
    return f"Runs in the sandbox ({backend}): " + ", ".join(limits) + ".", True


def approval_sandbox(services: Services, profile_id: int,
                     request: ApprovalRequest) -> dict[str, Any]:
    """The ``sandbox`` and ``tool_config`` keyword arguments of ApprovalDialog for ``request``:
    the app's sandbox and the tool's saved config in the profile the run uses."""
    setting = services.profiles.tool_settings(profile_id).get(request.tool_name)
    return {"sandbox": services.sandbox,
            "tool_config": dict(setting.config) if setting is not None else {}}


def _suggestion_details(suggestion: RuleSuggestion) -> str:
    lines = [f"• {item}" for item in suggestion.items]
    lines.append(suggestion.also_matches)
    return make_visible("\n".join(lines))


class ApprovalDialog(QDialog):
    """Shows one pending tool call. ``response()`` says what the person chose."""

    def __init__(self, request: ApprovalRequest, parent: QWidget | None = None,
                 working_dir=None, *, sandbox: Sandbox | None = None,
                 tool_config: Mapping[str, Any] | None = None) -> None:
        """``sandbox`` (the app's, ``Services.sandbox``) and ``tool_config`` (the tool's saved
        config in the profile) let the dialog say whether the call's programs run contained."""
        super().__init__(parent)
        self.request = request
        self.setWindowTitle(f"Approve {request.tool_name}?")
        # Not modal: Stop, Ctrl+. and the window's close button stay live and decline it
        # (Qt drops input and close events for a window a modal dialog blocks).
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.setMinimumSize(640, 480)
        self._suggestions: list[RuleSuggestion] = suggest_allow_rules(
            request.server_id, request.tool_name, request.input, request.spec, working_dir,
            request.decision)

        layout = QVBoxLayout(self)
        layout.setSpacing(10)

        title = QLabel(f"<span style='font-size:15px'>The AI wants to run "
                       f"<b>{escape(make_visible(request.tool_name))}</b></span>")
        title.setObjectName("approval-title")
        header = QHBoxLayout()
        header.addWidget(title)
        header.addStretch(1)
        # "1 of 2" when several calls wait (set_position); hidden for a lone call.
        self.position_label = QLabel("")
        self.position_label.setObjectName("approval-position")
        self.position_label.hide()
        header.addWidget(self.position_label)
        header.addWidget(badge(f"server: {make_visible(request.server_id)}", "neutral",
                               "Tool server id"))
        spec = request.spec
        if spec is not None:
            header.addWidget(badge(spec.category.value.replace("_", " "), "neutral"))
            header.addWidget(badge(f"{spec.risk.value} risk",
                                   "high" if spec.risk == RiskLevel.HIGH else "low"))
        layout.addLayout(header)

        # A guard's reason (a secret was read and this call sends data out; a sensitive path)
        # is what the person must read first.
        self.flow_reason: QLabel | None = None
        if request.decision.flow_reason:
            self.flow_reason = QLabel(
                "⚠ <b>Why this asks:</b> " +
                escape(make_visible(request.decision.flow_reason)))
            self.flow_reason.setObjectName("approval-flow-reason")
            self.flow_reason.setTextFormat(Qt.TextFormat.RichText)
            self.flow_reason.setWordWrap(True)
            self.flow_reason.setTextInteractionFlags(
                Qt.TextInteractionFlag.TextSelectableByMouse)
            self.flow_reason.setStyleSheet(_FLOW_REASON_STYLE)
            layout.addWidget(self.flow_reason)

        why = QLabel(_why_text(request))
        why.setObjectName("approval-why")
        why.setWordWrap(True)
        layout.addWidget(why)
        self.decided_by = QLabel(_decided_by_text(request))
        self.decided_by.setObjectName("approval-decided-by")
        self.decided_by.setTextFormat(Qt.TextFormat.PlainText)
        self.decided_by.setWordWrap(True)
        self.decided_by.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.decided_by.setStyleSheet("QLabel { color: palette(placeholder-text); "
                                      "font-size: 11px; }")
        layout.addWidget(self.decided_by)

        # The reviewer models were asked first and did not all approve: their verdicts and
        # why the person decides after all (app.core.review).
        self.reviews_panel: ReviewsPanel | None = None
        if request.reviews or request.review_reason:
            self.reviews_panel = ReviewsPanel()
            self.reviews_panel.set_reviews(request.reviews)
            self.reviews_panel.set_reason(request.review_reason or
                                          "The reviewers did not all approve: you decide.")
            scroll = QScrollArea()
            scroll.setObjectName("approval-reviews")
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QFrame.Shape.NoFrame)
            scroll.setWidget(self.reviews_panel)
            scroll.setMaximumHeight(260)
            scroll.setMinimumHeight(min(130, self.reviews_panel.sizeHint().height()))
            layout.addWidget(scroll)

        if spec is not None and spec.risk == RiskLevel.HIGH:
            warning = QLabel("⚠ " + _HIGH_RISK_WARNING.get(
                spec.category.value, "This tool can make changes.") +
                " Check the details before approving.")
            warning.setObjectName("approval-warning")
            warning.setWordWrap(True)
            warning.setStyleSheet("QLabel { background: #fff8c5; color: #4d2d00; border: 1px solid "
                                  "#d4a72c; border-radius: 6px; padding: 6px; }")
            layout.addWidget(warning)

        self.sandbox_label: QLabel | None = None
        found = sandbox_line(spec, request.input, sandbox, tool_config,
                            Path(working_dir) if working_dir is not None else None) \
            if sandbox is not None else None
        if found is not None:
            text, contained = found
            self.sandbox_label = QLabel(make_visible(text))
            self.sandbox_label.setObjectName("approval-sandbox" if contained
                                             else "approval-sandbox-warning")
            self.sandbox_label.setTextFormat(Qt.TextFormat.PlainText)
            self.sandbox_label.setWordWrap(True)
            self.sandbox_label.setStyleSheet(_SANDBOX_OK_STYLE if contained
                                             else _SANDBOX_WARNING_STYLE)
            layout.addWidget(self.sandbox_label)

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
        if self.reviews_panel is not None:
            # The reviews take room: never squeeze them over the call's details.
            self.setMinimumHeight(max(480, layout.minimumSize().height()))
            self.resize(max(self.width(), 720),
                        min(820, max(self.height(), layout.sizeHint().height())))

    def set_position(self, index: int, total: int) -> None:
        """Say this is call ``index`` of ``total`` waiting (1-based), in the title and the
        header; a lone call (``total`` ≤ 1) says nothing."""
        base = f"Approve {self.request.tool_name}?"
        if total <= 1:
            self.setWindowTitle(base)
            self.position_label.hide()
            return
        position = f"{index} of {total}"
        self.setWindowTitle(f"{base} ({position})")
        self.position_label.setText(f"<b>{position}</b>")
        self.position_label.setToolTip(f"Tool call {position} waiting for your decision")
        self.position_label.show()

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
