"""The approval dialog's "Remember" controls: which rule to remember (narrowest first, from
``suggest_allow_rules``), for how long — "always" (saved in the rules table by the agent loop)
or "in this conversation only" (kept in memory for the conversation,
``app.core.permissions.conversation_rules``) — and, before the box is ticked, what the chosen
rule would also allow. The choices' wording follows the scope."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.core.permissions.rules import PermissionRule
from app.core.permissions.suggestions import RuleSuggestion
from app.core.visible_text import make_visible

ALWAYS, CONVERSATION = "always", "conversation"


def _suggestion_details(suggestion: RuleSuggestion) -> str:
    lines = [f"• {item}" for item in suggestion.items]
    lines.append(suggestion.also_matches)
    return make_visible("\n".join(lines))


class RememberChoice(QWidget):
    def __init__(self, suggestions: list[RuleSuggestion], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.suggestions = suggestions
        self.remember = QCheckBox("Remember:")
        self.choice = QComboBox()
        for suggestion in suggestions:
            self.choice.addItem(make_visible(suggestion.label))
        self.scope = QComboBox()
        self.scope.setObjectName("approval-remember-scope")
        self.scope.addItem("always", ALWAYS)
        self.scope.addItem("in this conversation only", CONVERSATION)
        self.scope.setItemData(
            1, "Not saved as a rule: the same call in this conversation runs without asking; "
               "other conversations still ask.", Qt.ItemDataRole.ToolTipRole)
        for combo in (self.choice, self.scope):
            combo.setEnabled(False)
            self.remember.toggled.connect(combo.setEnabled)
        self._conversation_available = True
        self._sub_agent: str | None = None  # the sub-agent asking, if one is
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.remember)
        row.addWidget(self.choice, 1)
        row.addWidget(self.scope)
        # What the chosen rule would also allow, visible before the box is ticked.
        self.also_matches = QLabel()
        self.also_matches.setObjectName("approval-also-matches")
        self.also_matches.setTextFormat(Qt.TextFormat.PlainText)
        self.also_matches.setWordWrap(True)
        self.also_matches.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.also_matches)
        self.choice.currentIndexChanged.connect(self._show_also_matches)
        self.scope.currentIndexChanged.connect(lambda _i: self._scope_changed())
        if not suggestions:
            self.remember.setEnabled(False)
            self.also_matches.setText("No rule can be offered for this call: it is only "
                                      "approved once.")
        self._show_also_matches(self.choice.currentIndex())

    def for_sub_agent(self, name: str) -> None:
        """A sub-agent asks: what it is allowed is kept for that sub-agent only (the loop does
        so, app.core.agent.call_approval), never for the conversation that started it."""
        self._sub_agent = name
        self.scope.setItemText(0, f"for sub-agent {name} only")
        self.scope.setItemData(0, "Kept while this sub-agent runs; nothing is saved as a rule "
                                  "and no other agent is allowed it.", Qt.ItemDataRole.ToolTipRole)
        self.set_conversation_available(False)
        self._scope_changed()

    def set_conversation_available(self, available: bool) -> None:
        """Offer "in this conversation only" (only when something keeps such rules; never
        for a sub-agent's request)."""
        available = available and self._sub_agent is None
        self.scope.model().item(1).setEnabled(available)  # type: ignore[attr-defined]
        self._conversation_available = available
        if not available and self.scope.currentIndex() == 1:
            self.scope.setCurrentIndex(0)

    def chosen_scope(self) -> str:
        scope = str(self.scope.currentData())
        return CONVERSATION if scope == CONVERSATION and self._conversation_available \
            else ALWAYS

    def chosen_rules(self) -> tuple[PermissionRule, ...]:
        """The chosen rules if the box is ticked (whatever the scope), else none."""
        if not self.remember.isChecked() or not self.suggestions:
            return ()
        return self.suggestions[self.choice.currentIndex()].rules

    def _show_also_matches(self, index: int) -> None:
        if 0 <= index < len(self.suggestions):
            text = _suggestion_details(self.suggestions[index])
            if self.chosen_scope() == CONVERSATION:
                text += "\nOnly in this conversation: not saved as a rule."
            self.also_matches.setText(text)

    def _scope_changed(self) -> None:
        """"Always allow …" is not true of a rule kept for this conversation only."""
        here = self.chosen_scope() == CONVERSATION
        for i, suggestion in enumerate(self.suggestions):
            label = suggestion.label
            if here:
                label = label.replace("Always allow", "Allow", 1) + " in this conversation"
            elif self._sub_agent is not None:
                label = label.replace("Always allow", "Allow", 1) + \
                    f" for sub-agent {self._sub_agent}"
            self.choice.setItemText(i, make_visible(label))
        self._show_also_matches(self.choice.currentIndex())
