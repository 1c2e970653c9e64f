"""A tool call in the transcript: tool, decision and rule, status, duration, input and result."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.outcomes import CardStatus
from app.core.store.audit import INTERRUPTED_WHILE_RUNNING, NOT_RUN_INTERRUPTED
from app.core.visible_text import make_visible
from app.ui.widgets.badges import badge
from app.ui.widgets.highlighters import JsonHighlighter

_STATUS_TEXT: dict[CardStatus, str] = {
    CardStatus.REQUESTED: "⋯ requested",
    CardStatus.AWAITING: "● waiting for your approval",
    CardStatus.RUNNING: "▶ running",
    CardStatus.EXECUTED: "✓ done",
    CardStatus.ERROR: "✗ failed",
    CardStatus.DECLINED: "✗ declined",
    CardStatus.DENIED: "✗ denied by a rule",
    CardStatus.CANCELLED: "■ cancelled",
    CardStatus.INVALID: "✗ invalid input",
    # A call the app never finished (killed or crashed): the tool history says the same.
    CardStatus.INTERRUPTED: f"■ {NOT_RUN_INTERRUPTED}",
    CardStatus.INTERRUPTED_RUNNING: f"■ {INTERRUPTED_WHILE_RUNNING}",
}
_GOOD, _WAITING, _BAD = "#1a7f37", "#9a6700", "#cf222e"
_STATUS_COLOUR: dict[CardStatus, str] = {
    CardStatus.EXECUTED: _GOOD,
    CardStatus.AWAITING: _WAITING,
    **dict.fromkeys((CardStatus.ERROR, CardStatus.DECLINED, CardStatus.DENIED,
                     CardStatus.CANCELLED, CardStatus.INVALID, CardStatus.INTERRUPTED,
                     CardStatus.INTERRUPTED_RUNNING), _BAD),
}


class _Collapsible(QWidget):
    def __init__(self, title: str, text: str, *, json_text: bool = False,
                 expanded: bool = False) -> None:
        super().__init__()
        self.toggle = QToolButton()
        self.toggle.setText(title)
        self.toggle.setCheckable(True)
        self.toggle.setChecked(expanded)
        self.toggle.setAutoRaise(True)
        self.body = QPlainTextEdit(text)
        self.body.setReadOnly(True)
        self.body.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.body.setMaximumHeight(220)
        if json_text:
            self._highlighter = JsonHighlighter(self.body.document())
        self.body.setVisible(expanded)
        self._sync_arrow(expanded)
        self.toggle.toggled.connect(self._on_toggled)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.toggle)
        layout.addWidget(self.body)

    def _sync_arrow(self, expanded: bool) -> None:
        text = self.toggle.text().lstrip("▸▾ ")
        self.toggle.setText(("▾ " if expanded else "▸ ") + text)

    def _on_toggled(self, expanded: bool) -> None:
        self.body.setVisible(expanded)
        self._sync_arrow(expanded)

    def set_text(self, text: str) -> None:
        self.body.setPlainText(text)


class ToolCard(QFrame):
    def __init__(self, tool_use_id: str, tool_name: str, server_id: str, tool_input: Any,
                 decision_kind: str, rule_text: str) -> None:
        super().__init__()
        self.tool_use_id = tool_use_id
        self.tool_name = tool_name
        self.status = CardStatus.REQUESTED
        self.setObjectName("tool-card")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("QFrame#tool-card { border: 1px solid palette(mid); "
                           "border-radius: 8px; }")
        header = QHBoxLayout()
        name = QLabel(f"<b>{tool_name}</b>")
        header.addWidget(name)
        if server_id != "builtin":
            header.addWidget(badge(server_id, "neutral", "server"))
        self.decision_badge = badge(decision_kind, decision_kind, rule_text)
        header.addWidget(self.decision_badge)
        header.addStretch(1)
        self.status_label = QLabel(_STATUS_TEXT[CardStatus.REQUESTED])
        self.status_label.setObjectName("tool-status")
        header.addWidget(self.status_label)
        self.duration_label = QLabel("")
        self.duration_label.setStyleSheet("color: palette(placeholder-text);")
        header.addWidget(self.duration_label)
        self.rule_label = QLabel(rule_text)
        self.rule_label.setWordWrap(True)
        self.rule_label.setStyleSheet("color: palette(placeholder-text); font-size: 11px;")
        # What a person reads is what runs: ANSI escapes, bidi overrides and zero-width
        # characters in the input or the result are shown as marked escapes, not obeyed.
        self.input_section = _Collapsible(
            "Input", make_visible(json.dumps(tool_input, indent=2, ensure_ascii=False)),
            json_text=True)
        self.result_section = _Collapsible("Result", "")
        self.result_section.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(2)
        layout.addLayout(header)
        layout.addWidget(self.rule_label)
        layout.addWidget(self.input_section)
        layout.addWidget(self.result_section)

    def mark_approved(self) -> None:
        """The person approved an 'ask' call: say so instead of the rule's verdict."""
        self.decision_badge.setText("approved by you")

    def set_status(self, status: CardStatus) -> None:
        self.status = status
        self.status_label.setText(_STATUS_TEXT[status])
        colour = _STATUS_COLOUR.get(status)
        self.status_label.setStyleSheet(f"color: {colour};" if colour else "")

    def finish(self, outcome: str, is_error: bool, duration_ms: int, content: str) -> None:
        """``outcome`` is an audit outcome, or an interrupted status for a reloaded call."""
        self.set_status(CardStatus.for_outcome(outcome, is_error))
        if duration_ms:
            self.duration_label.setText(f"{duration_ms} ms")
        self.result_section.set_text(make_visible(content))
        self.result_section.show()
        if is_error:
            self.result_section.toggle.setChecked(True)
