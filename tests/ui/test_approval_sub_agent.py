"""A sub-agent's request: the dialog says which agent asks, its "Remember" is for that
sub-agent only, and "in this conversation" is never offered (it would widen the parent)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog

from app.core.agent.events import ApprovalRequest
from app.ui.dialogs.approval import ApprovalDialog


def _request(services, chain: tuple[str, ...]) -> ApprovalRequest:  # type: ignore[no-untyped-def]
    tool_input = {"path": "src/a.py", "content": "x"}
    decision = services.permissions.decide("builtin", "write_file", tool_input)
    return ApprovalRequest("tu_1", "write_file", "builtin", tool_input, None, decision,
                           agent_chain=chain)


def test_the_dialog_names_the_sub_agent_and_scopes_remember_to_it(  # type: ignore[no-untyped-def]
        qtbot, services, project) -> None:
    dialog = ApprovalDialog(_request(services, ("orchestrator", "researcher")), None, project)
    qtbot.addWidget(dialog)
    assert dialog.agent_chain is not None
    assert "orchestrator › researcher" in dialog.agent_chain.text()
    assert "sub-agent researcher" in dialog.windowTitle()
    dialog.set_position(1, 2)
    assert "sub-agent researcher" in dialog.windowTitle()
    dialog.set_conversation_scope_available(True)  # the queue would offer it; not here
    scope = dialog.remember_row.scope
    assert not scope.model().item(1).isEnabled()  # type: ignore[attr-defined]
    assert scope.itemText(0) == "for sub-agent researcher only"
    assert dialog.remember_row.suggestions
    dialog.remember_row.remember.setChecked(True)
    assert "for sub-agent researcher" in dialog.remember_row.choice.currentText()
    dialog.done(QDialog.DialogCode.Accepted)
    assert dialog.conversation_rules() == ()  # never the parent conversation's
    assert dialog.response().remember_rule is not None  # the loop keeps it for the child


def test_the_persons_own_request_is_unchanged(qtbot, services, project) -> None:  # type: ignore[no-untyped-def]
    dialog = ApprovalDialog(_request(services, ()), None, project)
    qtbot.addWidget(dialog)
    assert dialog.agent_chain is None and "sub-agent" not in dialog.windowTitle()
    dialog.set_conversation_scope_available(True)
    assert dialog.remember_row.scope.model().item(1).isEnabled()  # type: ignore[attr-defined]
