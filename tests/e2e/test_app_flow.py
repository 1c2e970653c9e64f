"""The product end to end: prompt → model asks for a tool → rules / approval dialog → result.

The real MainWindow, the real agent loop and SDK, the real write_file tool, a fake Messages
API on 127.0.0.1. Nothing unapproved may ever touch the disk.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.core.permissions.rules import PermissionRule
from app.core.store.profiles import DEFAULT_MODEL
from app.ui.widgets.tool_card import ToolCard
from tests.fakes.anthropic_server import Response
from tests.ui.conftest import wait_for

WRITE = {"path": "doc/notes.md", "content": "# Notes\nhello\n", "mode": "create"}


def _cards(window) -> list[ToolCard]:
    return [w for w in window.ai_panel.transcript.items() if isinstance(w, ToolCard)]


def _texts(window) -> str:
    from app.ui.widgets.transcript_view import MessageView

    return "\n".join(w.markdown for w in window.ai_panel.transcript.items()
                     if isinstance(w, MessageView))


async def _run_to_end(window, prompt: str = "write the notes") -> None:
    assert window.ai_panel.send(prompt)
    await wait_for(lambda: not window.ai_panel.running, timeout=20)


async def test_approve_writes_the_file(window, fake_anthropic, project):
    fake_anthropic.script(Response.tool_use("write_file", WRITE), Response.text("All done."))
    assert window.ai_panel.send("write the notes")
    await wait_for(lambda: window.approvals.current_dialog is not None)
    dialog = window.approvals.current_dialog
    assert dialog.isVisible()
    assert '"path": "doc/notes.md"' in dialog.input_view.toPlainText()
    assert "+hello" in dialog.diff_view.toPlainText()
    assert not (project / "doc" / "notes.md").exists()
    dialog.approve_button.click()
    await wait_for(lambda: not window.ai_panel.running, timeout=20)
    assert (project / "doc" / "notes.md").read_text() == "# Notes\nhello\n"
    assert "All done." in _texts(window)
    assert _cards(window)[0].status == "executed"
    results = fake_anthropic.last_request.tool_results()
    assert results and not results[0].get("is_error")


async def test_decline_with_reason_reaches_the_model(window, fake_anthropic, project):
    fake_anthropic.script(Response.tool_use("write_file", WRITE), Response.text("Understood."))
    assert window.ai_panel.send("write the notes")
    await wait_for(lambda: window.approvals.current_dialog is not None)
    dialog = window.approvals.current_dialog
    dialog.reason.setText("use README.md instead")
    dialog.decline_button.click()
    await wait_for(lambda: not window.ai_panel.running, timeout=20)
    audit = [(e.tool_name, e.outcome, e.output) for e in window.services.audit.list()]
    assert not (project / "doc").exists(), (sorted(project.rglob("*")), audit)
    result = fake_anthropic.last_request.tool_results()[0]
    assert result["is_error"] is True
    assert "use README.md instead" in str(result["content"])
    assert _cards(window)[0].status == "declined"


async def test_allow_rule_runs_without_dialog(window, fake_anthropic, project):
    window.services.permissions.rules.add(PermissionRule(
        decision="allow", tool_name="write_file", input_pattern="doc/**", priority=5))
    shown = []
    window.approvals.dialog_shown.connect(shown.append)
    fake_anthropic.script(Response.tool_use("write_file", WRITE), Response.text("ok"))
    await _run_to_end(window)
    assert shown == []
    assert (project / "doc" / "notes.md").exists()


async def test_deny_rule_refuses_without_dialog(window, fake_anthropic, project):
    window.services.permissions.rules.add(PermissionRule(
        decision="deny", tool_name="write_file", priority=5, description="no writes today"))
    shown = []
    window.approvals.dialog_shown.connect(shown.append)
    fake_anthropic.script(Response.tool_use("write_file", WRITE), Response.text("ok"))
    await _run_to_end(window)
    assert shown == []
    assert not (project / "doc").exists()
    card = _cards(window)[0]
    assert card.status == "denied"
    result = fake_anthropic.last_request.tool_results()[0]
    assert result["is_error"] is True


async def test_closing_window_with_pending_dialog_runs_nothing(window, fake_anthropic, project):
    fake_anthropic.script(Response.tool_use("write_file", WRITE), Response.text("never"))
    assert window.ai_panel.send("write the notes")
    await wait_for(lambda: window.approvals.current_dialog is not None)
    window.close()
    await wait_for(lambda: not window.isVisible(), timeout=20)
    assert not window.ai_panel.running
    assert window.approvals.current_dialog is None
    assert not (project / "doc").exists()
    outcomes = [e.outcome for e in window.services.audit.list()]
    assert "executed" not in outcomes


async def test_stop_during_approval_declines(window, fake_anthropic, project):
    fake_anthropic.script(Response.tool_use("write_file", WRITE), Response.text("never"))
    assert window.ai_panel.send("write the notes")
    await wait_for(lambda: window.approvals.current_dialog is not None)
    window.ai_panel.stop_button.click()
    await wait_for(lambda: not window.ai_panel.running, timeout=20)
    assert not (project / "doc").exists()
    assert window.ai_panel.send_button.isEnabled()


async def test_rules_table_edit_changes_next_decision(window, fake_anthropic, project):
    from app.ui.dialogs.settings import RulesTab
    from app.ui.models.rules_model import RulesTableModel

    tab = RulesTab(window.services)
    row = tab.model.add_rule(PermissionRule(decision="allow", tool_name="write_file",
                                            priority=5))
    fake_anthropic.script(Response.tool_use("write_file", WRITE), Response.text("ok"))
    await _run_to_end(window)
    assert (project / "doc" / "notes.md").exists()

    assert tab.model.setData(tab.model.index(row, RulesTableModel.COL_DECISION), "deny")
    second = dict(WRITE, path="doc/second.md")
    fake_anthropic.script(Response.tool_use("write_file", second), Response.text("ok"))
    await _run_to_end(window)
    assert not (project / "doc" / "second.md").exists()

    tab.model.delete_rows([tab.model.row_of(tab.model.rule_at(row).id)])
    fake_anthropic.script(Response.tool_use("write_file", dict(WRITE, path="doc/third.md")),
                          Response.text("ok"))
    assert window.ai_panel.send("again")
    await wait_for(lambda: window.approvals.current_dialog is not None)
    window.approvals.current_dialog.approve_button.click()
    await wait_for(lambda: not window.ai_panel.running, timeout=20)
    assert (project / "doc" / "third.md").exists()


async def test_unchecked_tool_is_not_offered(window, fake_anthropic):
    window.tools_panel.item("write_file").setCheckState(0, Qt.CheckState.Unchecked)
    fake_anthropic.script(Response.text("hi"))
    await _run_to_end(window, "hello")
    offered = fake_anthropic.last_request.tool_names
    assert "write_file" not in offered and "read_file" in offered


async def test_configure_change_applies_to_next_call(window, fake_anthropic, project):
    window.services.permissions.rules.add(PermissionRule(
        decision="allow", tool_name="write_file", priority=5))
    target = dict(WRITE, path="out/x.md")
    fake_anthropic.script(Response.tool_use("write_file", target), Response.text("ok"))
    await _run_to_end(window)
    assert not (project / "out").exists()  # outside the allowed write dirs
    assert fake_anthropic.last_request.tool_results()[0]["is_error"] is True

    dialog = window.tools_panel.open_configure("write_file")
    dialog.add_folder("allowed_write_dirs", str(project / "out"))
    dialog._try_accept()
    await wait_for(lambda: "out" in window.services.profiles.tool_settings(
        window.profile_id)["write_file"].config["allowed_write_dirs"])
    fake_anthropic.script(Response.tool_use("write_file", dict(target, create_dirs=True)),
                          Response.text("ok"))
    await _run_to_end(window)
    assert (project / "out" / "x.md").exists()


@pytest.mark.parametrize("status", [401, 500])
async def test_api_errors_show_inline_with_retry(window, fake_anthropic, status):
    from app.ui.widgets.transcript_view import ErrorCard

    fake_anthropic.script(*[Response.error(status)] * 5)
    await _run_to_end(window, "hello")
    errors = [w for w in window.ai_panel.transcript.items() if isinstance(w, ErrorCard)]
    assert errors
    if status == 500:
        fake_anthropic.clear()
        fake_anthropic.script(Response.text("recovered"))
        assert errors[-1].retry_button.isVisible()
        errors[-1].retry_button.click()
        await wait_for(lambda: not window.ai_panel.running and "recovered" in _texts(window),
                       timeout=20)


async def test_provider_tab_tests_the_connection(window, fake_anthropic):
    from app.ui.dialogs.settings import ProviderTab

    tab = ProviderTab(window.services, window.profile_id)
    tab.base_url.setText(fake_anthropic.base_url)
    tab.start_connection_test()
    await wait_for(lambda: tab.test_button.isEnabled(), timeout=20)
    assert tab.status.text().startswith("Connected:")
    assert tab.model.count() >= 1

    fake_anthropic.api_key = "sk-ant-test-fake-key-0000"  # the key fake_anthropic_env set
    tab.api_key.setText("sk-ant-wrong")  # the typed, unsaved key is the one tested
    tab.start_connection_test()
    await wait_for(lambda: tab.test_button.isEnabled(), timeout=20)
    assert "Connected" not in tab.status.text()


async def test_model_picker_saves_on_finish_not_per_keystroke(window, qtbot):
    from PySide6.QtCore import Qt as QtNs

    picker = window.profiles.model_picker
    editor = picker.lineEdit()
    editor.selectAll()
    qtbot.keyClicks(editor, "claude-x")
    assert window.services.profiles.get(window.profile_id).model == DEFAULT_MODEL
    qtbot.keyClick(editor, QtNs.Key.Key_Return)
    assert window.services.profiles.get(window.profile_id).model == "claude-x"


async def test_model_picker_lists_the_providers_models(window, fake_anthropic):
    await window.profiles.refresh_models()
    picker = window.profiles.model_picker
    offered = {picker.itemText(i) for i in range(picker.count())}
    assert set(fake_anthropic.models) <= offered
    assert window.profiles.model_picker.currentText() == DEFAULT_MODEL
