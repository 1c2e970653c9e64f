"""Issue 20, bug 10: no stale state — the "open a project folder" card goes once one is open,
only the latest failed turn can be retried, a dropped stream's text says it is incomplete, and
the rules tester re-reads the rules after a delete or an edit."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from app.core.agent.events import RunFailed, TextDelta
from app.core.agent.models.base import ProviderConnectionError, ProviderServerError
from app.core.permissions.rules import PermissionRule
from app.ui.widgets.transcript_view import ErrorCard, MessageView
from tests.ui.conftest import wait_for


def _panel(qtbot, services, root_holder: list[Path | None]):
    from PySide6.QtWidgets import QWidget

    from app.ui.ai_panel.panel import AIPanel
    from app.ui.approval_queue import ApprovalQueue

    host = QWidget()
    qtbot.addWidget(host)
    profile = services.profiles.ensure_default()
    assert profile.id is not None
    panel = AIPanel(services, profile.id, ApprovalQueue(host, lambda: root_holder[0]),
                    lambda: root_holder[0])
    qtbot.addWidget(panel)
    return panel


def _error_cards(panel) -> list[ErrorCard]:
    return [w for w in panel.transcript.items() if isinstance(w, ErrorCard)]


def test_the_open_a_folder_card_goes_when_a_project_opens(qtbot, services, project):
    root: list[Path | None] = [None]
    panel = _panel(qtbot, services, root)
    assert not panel.send("hello")
    assert any("Open a project folder first" in c.message for c in _error_cards(panel))
    root[0] = project
    panel.project_opened(project)
    assert not any("Open a project folder first" in c.message for c in _error_cards(panel))


def test_only_the_latest_failed_turn_can_be_retried(qtbot, services, project):
    panel = _panel(qtbot, services, [project])
    panel.handle_event(RunFailed("server error", ProviderServerError))
    panel.handle_event(RunFailed("server error again", ProviderServerError))
    first, second = _error_cards(panel)
    assert first.retry_button.isVisible() is second.retry_button.isVisible()  # both retryable
    assert not first.retry_button.isEnabled()
    assert second.retry_button.isEnabled()


def test_a_retry_in_progress_disables_the_card_it_came_from(qtbot, services, project):
    panel = _panel(qtbot, services, [project])
    panel.handle_event(RunFailed("server error", ProviderServerError))
    card = _error_cards(panel)[0]
    calls: list[int] = []
    panel.retry = lambda: calls.append(1)  # type: ignore[method-assign]
    card.retry_button.click()
    card.retry_button.click()
    assert calls == [1] or not card.retry_button.isEnabled()


def test_text_of_a_dropped_stream_is_marked_incomplete(qtbot, services, project):
    panel = _panel(qtbot, services, [project])
    panel.handle_event(TextDelta("Here is the first half of"))
    panel.handle_event(RunFailed("connection dropped", ProviderConnectionError))
    view = next(w for w in panel.transcript.items() if isinstance(w, MessageView))
    assert view.incomplete
    assert "incomplete" in view.toPlainText()
    assert "Here is the first half of" in view.toPlainText()


def test_a_finished_answer_is_not_marked_incomplete(qtbot, services, project):
    from app.core.agent.events import RunFinished

    panel = _panel(qtbot, services, [project])
    panel.handle_event(TextDelta("A whole answer."))
    panel.handle_event(RunFinished("end_turn", 1))
    view = next(w for w in panel.transcript.items() if isinstance(w, MessageView))
    assert not view.incomplete
    assert "incomplete" not in view.toPlainText()


def _tab(qtbot, services):
    from app.ui.dialogs.rules_tab import RulesTab

    tab = RulesTab(services)
    qtbot.addWidget(tab)
    return tab


async def _decide(tab, tool: str, text: str) -> str:
    tab.test_tool.setCurrentText(tool)
    tab.test_input.setPlainText(text)
    tab.test_button.click()
    await wait_for(lambda: tab.test_result.text() not in ("", "Deciding…"))
    return tab.test_result.text()


async def test_the_tester_rereads_the_rules_after_a_delete(qtbot, services):
    rule = services.permissions.rules.add(PermissionRule(
        decision="deny", tool_name="shell_exec", input_pattern="rm *", priority=70,
        description="no deletes"))
    tab = _tab(qtbot, services)
    shown = await _decide(tab, "shell_exec", '{"command": "rm -rf build"}')
    assert shown.startswith("<b>DENY</b>") and f"rule #{rule.id}" in shown
    tab.model.delete_rows([tab.model.row_of(rule.id)])
    await wait_for(lambda: f"rule #{rule.id}" not in tab.test_result.text()
                   and tab.test_result.text() not in ("", "Deciding…"))
    assert not tab.test_result.text().startswith("<b>DENY</b>")


async def test_the_tester_follows_an_edited_rule(qtbot, services):
    rule = services.permissions.rules.add(PermissionRule(
        decision="deny", tool_name="shell_exec", input_pattern="rm *", priority=70))
    tab = _tab(qtbot, services)
    shown = await _decide(tab, "shell_exec", '{"command": "rm -rf build"}')
    assert shown.startswith("<b>DENY</b>")
    row = tab.model.row_of(rule.id)
    index = tab.model.index(row, tab.model.COL_DECISION)
    assert tab.model.setData(index, "ask", Qt.ItemDataRole.EditRole)
    await wait_for(lambda: tab.test_result.text().startswith("<b>ASK</b>"))
