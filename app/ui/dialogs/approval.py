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

The dialog's words live next to it: ``approval_text`` (why it asks, what decided, the input as
visible JSON) and ``approval_sandbox`` (the sandbox line).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import (
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
from app.core.tools.base import RiskLevel
from app.core.visible_text import make_visible
from app.ui.dialogs.approval_lift import LiftNote
from app.ui.dialogs.approval_sandbox import approval_sandbox, sandbox_line
from app.ui.dialogs.approval_text import decided_by_text, visible_json, why_text
from app.ui.dialogs.remember_choice import ALWAYS, CONVERSATION, RememberChoice
from app.ui.markup import escape
from app.ui.tab_focus import tab_moves_focus
from app.ui.tones import Tone, tone_callout
from app.ui.widgets.badges import badge
from app.ui.widgets.highlighters import DiffHighlighter, JsonHighlighter
from app.ui.widgets.review_panel import ReviewsPanel

# Where callers and tests have always found them (the window asks for approval_sandbox).
__all__ = ["ApprovalDialog", "approval_sandbox", "sandbox_line"]


def _code_view(text: str, highlighter: type | None = None) -> QPlainTextEdit:
    view = QPlainTextEdit(make_visible(text))
    view.setReadOnly(True)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    if highlighter is not None:
        view._highlighter = highlighter(view.document())  # type: ignore[attr-defined]
    return view


_FLOW_REASON_SHAPE = "border-radius: 6px; padding: 8px; font-size: 13px;"


class ApprovalDialog(QDialog):
    """Shows one pending tool call. ``response()`` says what the person chose."""

    def __init__(self, request: ApprovalRequest, parent: QWidget | None = None,
                 project_root: Path | str | None = None, *, sandbox: Sandbox | None = None,
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
            request.server_id, request.tool_name, request.input, request.spec, project_root,
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
        if request.conversation_title:  # several conversations run at once: which one asks
            self.conversation_label = QLabel(
                f"In the conversation <b>{escape(make_visible(request.conversation_title))}</b>")
            self.conversation_label.setObjectName("approval-conversation")
            layout.addWidget(self.conversation_label)
        # A sub-agent asks: the person must know which agent, before anything else.
        self.agent_chain: QLabel | None = None
        if request.agent_chain:
            chain = " › ".join(make_visible(n) for n in request.agent_chain)
            self.agent_chain = QLabel(f"Asked by sub-agent: <b>{escape(chain)}</b>")
            self.agent_chain.setObjectName("approval-agent-chain")
            self.agent_chain.setAccessibleName(f"Asked by sub-agent {chain}")
            self.agent_chain.setStyleSheet("QLabel { padding: 4px 8px; border-radius: 4px; "
                                           "background: palette(alternate-base); }")
            layout.addWidget(self.agent_chain)
            self.set_position(1, 1)  # the title names the sub-agent too

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
            tone_callout(self.flow_reason, Tone.DANGER, _FLOW_REASON_SHAPE)
            layout.addWidget(self.flow_reason)

        why = QLabel(why_text(request))
        why.setObjectName("approval-why")
        why.setWordWrap(True)
        layout.addWidget(why)
        self.decided_by = QLabel(decided_by_text(request))
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
            warning = QLabel("⚠ " + spec.category.risk_warning +
                             " Check the details before approving.")
            warning.setObjectName("approval-warning")
            warning.setWordWrap(True)
            tone_callout(warning, Tone.WARNING)
            layout.addWidget(warning)

        self.sandbox_label: QLabel | None = None
        found = sandbox_line(spec, request.input, sandbox, tool_config,
                            Path(project_root) if project_root is not None else None) \
            if sandbox is not None else None
        if found is not None:
            text, contained = found
            self.sandbox_label = QLabel(make_visible(text))
            self.sandbox_label.setObjectName("approval-sandbox" if contained
                                             else "approval-sandbox-warning")
            self.sandbox_label.setTextFormat(Qt.TextFormat.PlainText)
            self.sandbox_label.setWordWrap(True)
            tone_callout(self.sandbox_label, Tone.SUCCESS if contained else Tone.CAUTION)
            layout.addWidget(self.sandbox_label)

        # The tool's configuration refused the call: approving also lifts that limit.
        self.lift_note: LiftNote | None = None
        if request.lift is not None:
            self.lift_note = LiftNote(request.tool_name, request.lift)
            layout.addWidget(self.lift_note)

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
            json.dumps(visible_json(request.input), indent=2, ensure_ascii=False,
                       sort_keys=True),
            JsonHighlighter)
        self.tabs.addTab(self.input_view, "Input (JSON)")
        layout.addWidget(self.tabs, 1)

        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        layout.addWidget(line)

        self.remember_row = RememberChoice(self._suggestions)
        if request.agent_chain:
            self.remember_row.for_sub_agent(make_visible(request.agent_chain[-1]))
        layout.addWidget(self.remember_row)
        # The row's parts, by the names callers and tests have always used.
        self.remember = self.remember_row.remember
        self.remember_choice = self.remember_row.choice
        self.remember_scope = self.remember_row.scope
        self.also_matches = self.remember_row.also_matches

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
        tab_moves_focus(self)  # Tab walks reason → Decline → Approve, never into the code
        if self.reviews_panel is not None:
            # The reviews take room: never squeeze them over the call's details.
            self.setMinimumHeight(max(480, layout.minimumSize().height()))
            self.resize(max(self.width(), 720),
                        min(820, max(self.height(), layout.sizeHint().height())))

    def set_position(self, index: int, total: int) -> None:
        """Say this is call ``index`` of ``total`` waiting (1-based), in the title and the
        header; a lone call (``total`` ≤ 1) says nothing."""
        base = f"Approve {self.request.tool_name}?"
        if self.request.agent_chain:
            base += f" (sub-agent {make_visible(self.request.agent_chain[-1])})"
        if total <= 1:
            self.setWindowTitle(base)
            self.position_label.hide()
            return
        position = f"{index} of {total}"
        self.setWindowTitle(f"{base} ({position})")
        self.position_label.setText(f"<b>{position}</b>")
        self.position_label.setToolTip(f"Tool call {position} waiting for your decision")
        self.position_label.show()

    def _command_parts(self) -> list[str]:
        """The call's subjects, for a tool whose spec says a person must read them
        (``subjects_heading``: e.g. each command of a shell chain)."""
        if self.request.spec is None or not self.request.spec.subjects_heading:
            return []
        try:
            return self.request.spec.subjects(self.request.input, None)
        except Exception:
            return []

    def set_conversation_scope_available(self, available: bool) -> None:
        """Offer "in this conversation only" (the queue knows whether anything keeps it)."""
        self.remember_row.set_conversation_available(available)

    def _chosen_rules(self) -> tuple[PermissionRule, ...]:
        if self.result() != QDialog.DialogCode.Accepted:
            return ()
        return self.remember_row.chosen_rules()

    def conversation_rules(self) -> tuple[PermissionRule, ...]:
        """The rules to remember for this conversation only (never saved as rules)."""
        if self.remember_row.chosen_scope() != CONVERSATION:
            return ()
        return self._chosen_rules()

    def response(self) -> ApprovalResponse:
        approved = self.result() == QDialog.DialogCode.Accepted
        # Rules remembered "always" go with the answer (the loop saves them); those for this
        # conversation only never do (``conversation_rules``).
        rules = self._chosen_rules() if self.remember_row.chosen_scope() == ALWAYS else ()
        return ApprovalResponse(approved=approved, reason=self.reason.text().strip(),
                                remember_rule=rules[0] if rules else None,
                                more_rules=tuple(rules[1:]),
                                keep_lift=approved and self.lift_note is not None
                                and self.lift_note.keep.isChecked())
