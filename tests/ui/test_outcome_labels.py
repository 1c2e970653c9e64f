"""Issue 20, bug 11: one vocabulary for what decided a call and what became of it — the cards,
reloaded cards, the tool history and its details all say "approved by you", "declined",
"refused by capability", "invalid", "not run", never the rules' raw "ask" or "deny: no rule
matched" for a call that was something else."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.core.agent.events import (
    AwaitingApproval,
    ToolFinished,
    ToolRequested,
    ToolStarted,
)
from app.core.outcomes import Outcome
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import Decision
from app.ui.models.history_model import HistoryTableModel
from app.ui.widgets.tool_card import ToolCard
from tests.ui.conftest import make_ai_panel

ASK = Decision("ask")
ALLOW = Decision("allow", PermissionRule(id=3, decision="allow", tool_name="read_file"))


def _cards(panel) -> dict[str, ToolCard]:
    return {w.tool_use_id: w for w in panel.transcript.items() if isinstance(w, ToolCard)}


def _request(panel, use_id: str, decision: Decision, tool: str = "shell_exec") -> ToolCard:
    panel.handle_event(ToolRequested(use_id, tool, "builtin", {"command": "ls"}, decision))
    return _cards(panel)[use_id]


class _Request:
    def __init__(self, tool_use_id: str) -> None:
        self.tool_use_id, self.tool_name = tool_use_id, "shell_exec"


def test_a_declined_card_says_declined(qtbot, services, project):
    panel = make_ai_panel(qtbot, services, project)
    card = _request(panel, "t1", ASK)
    assert card.decision_badge.text() == "asks you"
    panel.handle_event(AwaitingApproval(_Request("t1")))  # type: ignore[arg-type]
    panel.handle_event(ToolFinished("t1", "shell_exec", True, 0, "The user declined this tool "
                                    "call.", Outcome.DECLINED))
    assert card.decision_badge.text() == "declined"
    assert card.status_label.text() == "✗ declined"


def test_an_approved_card_says_approved_by_you_and_done(qtbot, services, project):
    panel = make_ai_panel(qtbot, services, project)
    card = _request(panel, "t1", ASK)
    panel.handle_event(AwaitingApproval(_Request("t1")))  # type: ignore[arg-type]
    panel.handle_event(ToolStarted("t1", "shell_exec"))
    panel.handle_event(ToolFinished("t1", "shell_exec", False, 0, "ok", Outcome.EXECUTED))
    assert card.decision_badge.text() == "approved by you"
    assert card.status_label.text() == "✓ done"
    assert card.duration_label.text() == "0 ms"  # it ran: even a fast call has a duration


def test_an_allowed_card_says_allowed_by_rule(qtbot, services, project):
    panel = make_ai_panel(qtbot, services, project)
    card = _request(panel, "t1", ALLOW, "read_file")
    assert card.decision_badge.text() == "allowed by rule"


def test_invalid_input_is_labelled_invalid_not_no_rule_matched(qtbot, services, project):
    panel = make_ai_panel(qtbot, services, project)
    card = _request(panel, "t1", Decision("deny", None, note="The input is not valid JSON."))
    panel.handle_event(ToolFinished("t1", "shell_exec", True, 0, "The input is not valid "
                                    "JSON, so the call was not run.", Outcome.INVALID))
    assert card.decision_badge.text() == "invalid"
    assert card.status_label.text() == "✗ invalid"
    assert "no rule matched" not in card.rule_label.text()
    assert card.rule_label.text().startswith("invalid")


def test_a_capability_refusal_says_so(qtbot, services, project):
    panel = make_ai_panel(qtbot, services, project)
    card = _request(panel, "t1", ASK)
    panel.handle_event(ToolFinished(
        "t1", "shell_exec", True, 0, "curl is not an allowed program.\n(Not run, and the user "
        "was not asked: the tool's configuration does not allow this call.)", Outcome.DENIED))
    assert card.decision_badge.text() == "refused by capability"
    assert card.status_label.text() == "✗ refused by capability"


def test_a_call_never_reached_says_not_run(qtbot, services, project):
    panel = make_ai_panel(qtbot, services, project)
    card = _request(panel, "t1", ALLOW, "read_file")
    panel.handle_event(ToolFinished("t1", "read_file", True, 0, "Not run: the run was "
                                    "stopped.", Outcome.CANCELLED))
    assert card.decision_badge.text() == "not run"
    assert card.status_label.text() == "■ not run"


# -- the history ---------------------------------------------------------------------------------

def _record(services, use_id: str, **fields) -> None:
    base = {"tool_name": "shell_exec", "server_id": "builtin", "tool_input": {"command": "ls"},
            "decision": "ask", "outcome": Outcome.EXECUTED, "output": "ok",
            "tool_use_id": use_id}
    base.update(fields)
    services.audit.record(**base)


def _columns(model: HistoryTableModel) -> dict[str, tuple[str, str]]:
    return {model.execution_at(r).tool_use_id or "": (
        model.data(model.index(r, model.COL_WHO), Qt.ItemDataRole.DisplayRole),
        model.data(model.index(r, model.COL_OUTCOME), Qt.ItemDataRole.DisplayRole))
        for r in range(model.rowCount())}


def test_history_uses_the_same_words_as_the_cards(qtbot, services):
    _record(services, "approved", duration_ms=5, decided_by="no rule matched")
    _record(services, "declined", outcome=Outcome.DECLINED, is_error=True,
            output="The user declined this tool call.")
    _record(services, "refused", decision="deny", outcome=Outcome.DENIED, is_error=True,
            rule_id=None, decided_by="refused by capability: curl is not an allowed program",
            output="curl is not an allowed program.")
    _record(services, "invalid", decision="deny", outcome=Outcome.INVALID, is_error=True,
            decided_by="no rule matched", output="The input is not valid JSON.")
    _record(services, "not_run", decision="allow", outcome=Outcome.CANCELLED, is_error=True,
            decided_by="rule #3: allow shell_exec", output="Not run: the run was stopped.")
    _record(services, "failed", decision="allow", is_error=True, duration_ms=7,
            decided_by="rule #3: allow shell_exec", output="exit code 1")
    _record(services, "denied", decision="deny", outcome=Outcome.DENIED, is_error=True,
            decided_by="rule #4: deny shell_exec")
    model = HistoryTableModel(services.audit)
    assert model.HEADERS[model.COL_WHO] == "Who decided"
    assert "Decision" not in model.HEADERS  # no raw "ask" for a call the person approved
    assert _columns(model) == {
        "approved": ("approved by you", "done"),
        "declined": ("declined", "declined"),
        "refused": ("refused by capability", "refused by capability"),
        "invalid": ("invalid", "invalid"),
        "not_run": ("not run", "not run"),
        "failed": ("allowed by rule", "failed"),
        "denied": ("denied by rule", "denied by rule"),
    }


def test_history_details_use_the_vocabulary(qtbot, services):
    from app.ui.widgets.history_view import HistoryView

    _record(services, "approved", duration_ms=5)
    view = HistoryView(services.audit, ["shell_exec"])
    qtbot.addWidget(view)
    view.table.selectRow(0)
    details = view.details.toPlainText()
    assert "who decided: approved by you" in details
    assert "outcome: done" in details


# -- reloaded cards --------------------------------------------------------------------------------

def test_reloaded_cards_keep_their_decision_and_duration(qtbot, services, project):
    conv = services.conversations.create(title="earlier")
    services.conversations.append(conv.id, "user", [{"type": "text", "text": "go"}])
    services.conversations.append(conv.id, "assistant", [
        {"type": "tool_use", "id": use_id, "name": "shell_exec", "input": {"command": "ls"}}
        for use_id in ("approved", "declined", "allowed")])
    services.conversations.append(conv.id, "user", [
        {"type": "tool_result", "tool_use_id": "approved", "content": "ok", "is_error": False},
        {"type": "tool_result", "tool_use_id": "declined", "content": "The user declined this "
         "tool call.", "is_error": True},
        {"type": "tool_result", "tool_use_id": "allowed", "content": "ok", "is_error": False}])
    _record(services, "approved", duration_ms=42, conversation_id=conv.id,
            decided_by="no rule matched")
    _record(services, "declined", outcome=Outcome.DECLINED, is_error=True,
            conversation_id=conv.id, output="The user declined this tool call.")
    rule = services.permissions.rules.add(PermissionRule(decision="allow",
                                                         tool_name="shell_exec"))
    _record(services, "allowed", decision="allow", duration_ms=0, conversation_id=conv.id,
            rule_id=rule.id, decided_by=f"rule #{rule.id}: allow shell_exec")
    panel = make_ai_panel(qtbot, services, project)
    panel.conversations.open(conv.id)
    cards = _cards(panel)
    assert {i: c.decision_badge.text() for i, c in cards.items()} == {
        "approved": "approved by you", "declined": "declined", "allowed": "allowed by rule"}
    assert cards["approved"].duration_label.text() == "42 ms"
    assert cards["allowed"].duration_label.text() == "0 ms"
    assert cards["declined"].duration_label.text() == ""
    assert f"rule #{rule.id}" in cards["allowed"].rule_label.text()
