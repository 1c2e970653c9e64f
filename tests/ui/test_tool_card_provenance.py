"""The tool card names the provenance that decided, as the approval dialog and the audit do.

A third-party call the person "Always allow"ed, whose recipient came from a tool result, is
raised to ask by the provenance guard (driven through the real ``decide()``); its card, made by
the AI panel's ``ToolCards`` from the ``ToolRequested`` event, must say which value, in which
argument, and which result it came from — in the words the audit row keeps.
"""

from __future__ import annotations

from app.core.agent.call_audit import decided_by_words
from app.core.agent.events import ToolRequested
from app.core.store.audit import ToolExecution
from app.ui.ai_panel.tool_cards import ToolCards
from app.ui.widgets.conversation_replay import _restored_card
from tests.unit.permissions.test_provenance import (  # the guard's own fixture and helpers
    AUTO,
    INJECTED_IBAN,
    INJECTION,
    PERSON_IBAN,
    _decide,
    _flow,
    service,  # noqa: F401  (a fixture)
)


def test_the_card_names_the_value_the_argument_and_the_result_it_came_from(
        qtbot, service, project):  # noqa: F811
    flow = _flow(f"Pay my rent to {PERSON_IBAN}", INJECTION)
    tool_input = {"recipient": INJECTED_IBAN, "amount": 100}
    decision = _decide(service, project, "bank", "bank__send_money", tool_input, flow, AUTO)
    assert decision.kind == "ask" and "provenance guard" in decision.decided_by

    cards = ToolCards()
    card = cards.request(ToolRequested("call-1", "bank__send_money", "bank", tool_input,
                                       decision))
    qtbot.addWidget(card)
    shown = card.rule_label.text()
    assert INJECTED_IBAN.lower() in shown  # which value
    assert "recipient" in shown  # in which argument
    assert "the result of bank__get_transactions" in shown  # where it came from
    assert "untrusted content" in shown  # the guard's reason, as the dialog shows it
    assert shown == decided_by_words(decision)  # the audit row's words
    assert card.decision_badge.toolTip() == shown

    # Reopened later: the card is rebuilt from the audit row, which kept those words.
    row = ToolExecution(1, "bank__send_money", "bank", tool_input, "done", False, "ask",
                        "approved", None, 5, 1, "call-1", "2026-01-02T10:35:00+00:00",
                        decided_by=decided_by_words(decision))
    reloaded = _restored_card({"id": "call-1", "name": "bank__send_money",
                               "input": tool_input}, "bank", row)
    qtbot.addWidget(reloaded)
    assert reloaded.rule_label.text() == shown
