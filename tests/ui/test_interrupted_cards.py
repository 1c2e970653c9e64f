"""After a restart, a call the app never finished reads "not run (interrupted)" (or "interrupted
while running") on its transcript card and in the tool history — never "✓ done"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.core.agent.transcript import INTERRUPTED_RESULT
from app.core.services import Services
from app.core.store.audit import INTERRUPTED_WHILE_RUNNING, NOT_RUN_INTERRUPTED
from app.core.store.db import transaction, utc_now
from app.ui.ai_panel.panel import AIPanel
from app.ui.models.history_model import HistoryTableModel
from app.ui.widgets.history_view import HistoryView
from app.ui.widgets.tool_card import ToolCard
from tests.fakes.anthropic_server import (  # noqa: F401  (the fixture)
    FakeAnthropicServer,
    Response,
    fake_anthropic,
)
from tests.ui.conftest import make_ai_panel
from tests.unit.agent import interrupted_child


@pytest.fixture
def panel(qtbot, services: Services, project: Path) -> AIPanel:
    return make_ai_panel(qtbot, services, project)


def _cards(panel: AIPanel) -> dict[str, ToolCard]:
    return {w.tool_use_id: w for w in panel.transcript.items() if isinstance(w, ToolCard)}


def _outcome_column(model: HistoryTableModel) -> dict[str, str]:
    return {model.execution_at(r).tool_use_id or "": model.data(
        model.index(r, HistoryTableModel.COL_OUTCOME), Qt.ItemDataRole.DisplayRole)
        for r in range(model.rowCount())}


def test_killed_while_approval_pending_card_and_history_say_not_run(
        qtbot, panel: AIPanel, services: Services, fake_anthropic: FakeAnthropicServer,  # noqa: F811
        fresh_data_dir: Path, project: Path) -> None:
    fake_anthropic.script(Response.tool_use("record", {"value": "x"},
                                            id=interrupted_child.APPROVAL_CALL_ID,
                                            text="I will record it."))
    # The app, in another process, asks for approval; it is killed before anyone answers.
    proc, conversation_id = interrupted_child.spawn(
        fresh_data_dir / "tebiki.sqlite3", fake_anthropic.base_url, "approval", project)
    interrupted_child.kill(proc)

    history = HistoryView(services.audit, services.registry.names())
    qtbot.addWidget(history)
    assert _outcome_column(history.model) == {
        interrupted_child.APPROVAL_CALL_ID: NOT_RUN_INTERRUPTED}
    history.table.selectRow(0)
    assert f"outcome: {NOT_RUN_INTERRUPTED}" in history.details.toPlainText()

    panel.conversations.open(conversation_id)
    card = _cards(panel)[interrupted_child.APPROVAL_CALL_ID]
    assert card.status == "interrupted"
    assert card.status_label.text() == f"■ {NOT_RUN_INTERRUPTED}"
    assert card.decision_badge.text() == "not answered"


def _conversation_with_calls(services: Services) -> int:
    """A stored conversation as a killed app leaves it, with an audit row per call written by
    that earlier process (another owner)."""
    conv = services.conversations.create(title="earlier")
    uses = [{"type": "tool_use", "id": i, "name": "read_file", "input": {"path": "a"}}
            for i in ("toolu_pending", "toolu_running", "toolu_lost", "toolu_declined",
                      "toolu_done")]
    services.conversations.append(conv.id, "user", [{"type": "text", "text": "go"}])
    services.conversations.append(conv.id, "assistant", uses)
    services.conversations.append(conv.id, "user", [
        {"type": "tool_result", "tool_use_id": "toolu_declined", "content": "The user "
         "declined this tool call.", "is_error": True},
        {"type": "tool_result", "tool_use_id": "toolu_done", "content": "contents of a",
         "is_error": False}])
    rows = [("toolu_pending", "pending", "cancelled", None),
            ("toolu_running", "running", "cancelled", None),
            ("toolu_declined", "done", "declined", "The user declined this tool call."),
            ("toolu_done", "done", "executed", "contents of a")]
    with transaction(services.db) as conn:
        for use_id, state, outcome, output in rows:
            conn.execute(
                "INSERT INTO tool_executions (tool_name, server_id, input, output, is_error,"
                " decision, outcome, conversation_id, tool_use_id, created_at, state, owner)"
                " VALUES ('read_file', 'builtin', ?, ?, ?, 'ask', ?, ?, ?, ?, ?,"
                " 'an-earlier-process')",
                (json.dumps({"path": "a"}), output, int(outcome != "executed"), outcome,
                 conv.id, use_id, utc_now(), state))
    return conv.id


def test_reloaded_cards_say_what_happened(panel: AIPanel, services: Services) -> None:
    conversation_id = _conversation_with_calls(services)
    panel.conversations.open(conversation_id)
    cards = _cards(panel)

    assert {i: c.status_label.text() for i, c in cards.items()} == {
        "toolu_pending": f"■ {NOT_RUN_INTERRUPTED}",
        "toolu_running": f"■ {INTERRUPTED_WHILE_RUNNING}",
        "toolu_lost": f"■ {NOT_RUN_INTERRUPTED}",  # killed before even its record was written
        "toolu_declined": "✗ declined",
        "toolu_done": "✓ done",
    }
    assert cards["toolu_lost"].result_section.body.toPlainText() == INTERRUPTED_RESULT
    assert "never run" in cards["toolu_pending"].result_section.body.toPlainText()


def test_history_labels_match_the_cards(qtbot, services: Services) -> None:
    _conversation_with_calls(services)
    model = HistoryTableModel(services.audit)
    assert _outcome_column(model) == {
        "toolu_pending": NOT_RUN_INTERRUPTED,
        "toolu_running": INTERRUPTED_WHILE_RUNNING,
        "toolu_declined": "declined",
        "toolu_done": "done",  # the card's word ("✓ done")
    }
