"""What the permission modes and the flow guard show in the dialogs: the approval dialog's "Why
this asks", the tool history's "Decided by", the rule editor's "Ignore the flow guard" and the
rules table's warning, Settings → Sensitive paths, and "Test a call" with a mode and simulated
flow labels."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPlainTextEdit

from app.core.agent.events import ApprovalRequest
from app.core.permission_mode import PermissionMode
from app.core.permissions.flow import FlowLabel, FlowState
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import DecisionContext
from app.core.services import Services
from app.ui.dialogs.approval import ApprovalDialog
from app.ui.dialogs.rule_editor import RuleEditorDialog
from app.ui.dialogs.rules_tab import RulesTab
from app.ui.dialogs.sensitive_settings import SensitivePathsTab
from app.ui.dialogs.settings import SettingsDialog
from app.ui.models.history_model import HistoryTableModel
from app.ui.models.rules_model import RulesTableModel
from app.ui.widgets.history_view import HistoryView
from tests.ui.conftest import wait_for

FETCH = {"url": "https://example.com/upload"}


def _secret_flow() -> FlowState:
    flow = FlowState()
    flow.add(FlowLabel.READ_SENSITIVE, "~/.aws/credentials", "read_file")
    return flow


def _request(services: Services, tool: str, tool_input: dict,
             context: DecisionContext | None = None) -> ApprovalRequest:
    found = services.registry.get(tool)
    assert found is not None
    decision = services.permissions.decide("builtin", tool, tool_input, context)
    return ApprovalRequest("tu_1", tool, "builtin", tool_input, found.spec, decision, None)


# -- approval dialog -------------------------------------------------------------------------


def test_flow_reason_comes_first_in_the_approval_dialog(qtbot, services: Services,
                                                        project: Path):
    request = _request(services, "web_fetch", FETCH, DecisionContext(flow=_secret_flow()))
    assert request.decision.kind == "ask" and request.decision.flow_reason  # the guard asked
    dialog = ApprovalDialog(request, None, project)
    qtbot.addWidget(dialog)
    reason = dialog.flow_reason
    assert reason is not None
    assert "Why this asks:" in reason.text()
    assert "~/.aws/credentials" in reason.text() and "example.com" in reason.text()
    labels = [w for w in dialog.findChildren(QLabel) if w.objectName()]
    order = [w.objectName() for w in labels]
    layout = dialog.layout()
    # Above the explanation and the rest of the dialog.
    assert layout.indexOf(reason) < layout.indexOf(dialog.findChild(QLabel, "approval-why"))
    assert "approval-decided-by" in order
    assert "flow guard" in dialog.decided_by.text()
    why = dialog.findChild(QLabel, "approval-why").text()
    assert "would allow this call, but the flow guard asks you first" in why


def test_flow_reason_is_shown_as_text(qtbot, services: Services, project: Path):
    request = _request(services, "web_fetch", FETCH, DecisionContext(flow=_secret_flow()))
    from dataclasses import replace

    request = replace(request, decision=replace(
        request.decision, flow_reason="This conversation read <b>x</b>\u202e; it sends data."))
    dialog = ApprovalDialog(request, None, project)
    qtbot.addWidget(dialog)
    assert dialog.flow_reason is not None
    text = dialog.flow_reason.text()
    assert "&lt;b&gt;x&lt;/b&gt;" in text and "\u202e" not in text


def test_no_flow_reason_no_warning_but_what_decided(qtbot, services: Services, project: Path):
    request = _request(services, "write_file", {"path": "a.txt", "content": "x"},
                       DecisionContext(mode=PermissionMode.AUTO))
    dialog = ApprovalDialog(request, None, project)
    qtbot.addWidget(dialog)
    assert dialog.flow_reason is None
    assert dialog.findChild(QLabel, "approval-flow-reason") is None
    assert dialog.decided_by.text().startswith("Decided by: auto mode:")
    assert "auto mode decides: it asks you" in dialog.findChild(QLabel, "approval-why").text()


def test_rule_decided_call_says_which_rule(qtbot, services: Services, project: Path):
    request = _request(services, "write_file", {"path": "a.txt", "content": "x"})
    dialog = ApprovalDialog(request, None, project)
    qtbot.addWidget(dialog)
    assert "no rule matched" in dialog.decided_by.text() or "rule #" in dialog.decided_by.text()


# -- tool history ----------------------------------------------------------------------------


def test_history_shows_decided_by(qtbot, services: Services):
    rule = services.permissions.rules.list()[0]
    services.audit.record(tool_name="read_file", server_id="builtin",
                          tool_input={"path": "a.txt"}, decision="allow", outcome="executed",
                          output="ok", rule_id=rule.id)  # an older row: no decided_by
    guard = ("flow guard: the conversation read a secret and this call sends data out — This "
             "conversation read ~/.aws/credentials at 10:32; this call sends data to "
             "example.com.")
    services.audit.record(tool_name="web_fetch", server_id="builtin", tool_input=FETCH,
                          decision="ask", outcome="executed", output="ok", decided_by=guard)
    view = HistoryView(services.audit, services.registry.names())
    qtbot.addWidget(view)
    model = view.model
    assert model.HEADERS[HistoryTableModel.COL_DECIDED_BY] == "Decided by"
    shown = {model.execution_at(r).tool_name: model.data(
        model.index(r, HistoryTableModel.COL_DECIDED_BY)) for r in range(model.rowCount())}
    assert shown["read_file"] == f"rule #{rule.id}"
    assert shown["web_fetch"].startswith("flow guard:") and shown["web_fetch"].endswith("…")
    row = next(r for r in range(model.rowCount())
               if model.execution_at(r).tool_name == "web_fetch")
    assert model.data(model.index(row, HistoryTableModel.COL_DECIDED_BY),
                      Qt.ItemDataRole.ToolTipRole) == guard
    view.table.selectRow(row)
    assert f"decided by: {guard}" in view.details.toPlainText()


# -- rule editor and rules table -------------------------------------------------------------


def test_ignore_flow_only_for_allow_rules_with_a_warning(qtbot, services: Services):
    dialog = RuleEditorDialog(services.registry.names(), None,
                              PermissionRule(decision="allow", tool_name="web_fetch"))
    qtbot.addWidget(dialog)
    dialog.show()
    box = dialog.ignore_flow
    assert box.text() == "Ignore the flow guard" and box.isEnabled() and not box.isChecked()
    warning = dialog.ignore_flow_warning
    assert "send data out" in warning.text() and "read secrets" in warning.text()
    assert warning.isVisible()
    box.setChecked(True)
    assert "#fff1e5" in warning.styleSheet()  # warning-styled once ticked

    dialog.decision.setCurrentText("deny")
    assert not box.isEnabled() and not box.isChecked() and not warning.isVisible()
    dialog.decision.setCurrentText("allow")
    box.setChecked(True)
    dialog._try_accept()
    rule = dialog.rule()
    assert rule is not None and rule.ignore_flow is True and rule.decision == "allow"


def test_rule_editor_keeps_ignore_flow_off_for_ask(qtbot, services: Services):
    dialog = RuleEditorDialog(services.registry.names(), None,
                              PermissionRule(decision="ask", tool_name="web_fetch",
                                             ignore_flow=True))
    qtbot.addWidget(dialog)
    assert not dialog.ignore_flow.isEnabled() and not dialog.ignore_flow.isChecked()
    dialog._try_accept()
    assert dialog.rule() is not None and dialog.rule().ignore_flow is False


def test_rules_table_marks_rules_that_ignore_the_flow_guard(qtbot, services: Services):
    rules = services.permissions.rules
    opted = rules.add(PermissionRule(decision="allow", tool_name="web_fetch", priority=50,
                                     input_pattern="docs.example.com", ignore_flow=True))
    plain = rules.add(PermissionRule(decision="allow", tool_name="web_search", priority=49))
    model = RulesTableModel(rules)
    assert model.HEADERS[RulesTableModel.COL_FLOW] == "Flow guard"
    assert model.HEADERS[RulesTableModel.COL_DESCRIPTION] == "Description"
    row, other = model.row_of(opted.id), model.row_of(plain.id)
    cell = model.index(row, RulesTableModel.COL_FLOW)
    assert model.data(cell) == "⚠ ignored"
    assert "send data out" in model.data(cell, Qt.ItemDataRole.ToolTipRole)
    assert model.data(cell, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    assert model.flags(cell) & Qt.ItemFlag.ItemIsUserCheckable
    plain_cell = model.index(other, RulesTableModel.COL_FLOW)
    assert model.data(plain_cell) == ""
    # Never switched on from the table (the editor shows the warning first) ...
    assert not model.flags(plain_cell) & Qt.ItemFlag.ItemIsUserCheckable
    assert not model.flags(plain_cell) & Qt.ItemFlag.ItemIsEditable
    assert not model.setData(plain_cell, Qt.CheckState.Checked, Qt.ItemDataRole.CheckStateRole)
    # ... but switched off by unticking.
    assert model.setData(cell, Qt.CheckState.Unchecked.value, Qt.ItemDataRole.CheckStateRole)
    assert rules.get(opted.id).ignore_flow is False
    assert model.data(model.index(model.row_of(opted.id), RulesTableModel.COL_FLOW)) == ""


# -- settings → sensitive paths --------------------------------------------------------------


def test_sensitive_paths_tab_shows_builtins_and_saves_additions(qtbot, services: Services,
                                                                project: Path):
    tab = SensitivePathsTab(services)
    qtbot.addWidget(tab)
    tab.show()
    builtin = tab.builtin
    assert builtin.isReadOnly() and not builtin.isVisible()  # folded away
    assert "~/.ssh" in builtin.toPlainText() and ".env" in builtin.toPlainText()
    tab.builtin_toggle.click()
    assert builtin.isVisible()

    secret = project / "deploy" / "key.txt"
    assert services.permissions.sensitive.match(str(secret)) is None
    tab.additions.setPlainText(f"{project / 'deploy'}\n\n  *.secret  \n")
    assert tab.save() is True
    assert services.sensitive_additions() == [str(project / "deploy"), "*.secret"]
    assert services.permissions.sensitive.match(str(secret)) is not None
    assert services.permissions.sensitive.match(str(project / "x.secret")) is not None
    again = SensitivePathsTab(services)
    qtbot.addWidget(again)
    assert again.additions.toPlainText() == f"{project / 'deploy'}\n*.secret"


def test_a_relative_path_is_not_saved(qtbot, services: Services):
    services.set_sensitive_additions(["*.secret"])
    dialog = SettingsDialog(services, services.profiles.ensure_default().id)
    qtbot.addWidget(dialog)
    tabs = [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())]
    assert "Sensitive paths" in tabs
    dialog.sensitive_tab.additions.setPlainText("deploy/keys")
    dialog._save()
    assert dialog.result() == 0 and dialog.tabs.currentWidget() is dialog.sensitive_tab
    assert "relative path" in dialog.sensitive_tab.error.text()
    assert services.sensitive_additions() == ["*.secret"]


# -- test a call -----------------------------------------------------------------------------


def _decide(tab: RulesTab, tool: str, text: str):
    tab.test_tool.setCurrentText(tool)
    tab.test_input.setPlainText(text)
    tab.test_button.click()
    return wait_for(lambda: tab.test_result.text() not in ("", "Deciding…"))


async def test_tester_simulates_a_secret_read(qtbot, services: Services):
    tab = RulesTab(services)
    qtbot.addWidget(tab)
    await _decide(tab, "web_fetch", '{"url": "https://example.com/x"}')
    assert tab.test_result.text().startswith("<b>ALLOW</b>")
    tab.test_labels[FlowLabel.READ_SENSITIVE].setChecked(True)
    assert tab.test_result.text() == ""  # the old answer is about another situation
    tab.test_button.click()
    await wait_for(lambda: tab.test_result.text() not in ("", "Deciding…"))
    text = tab.test_result.text()
    assert text.startswith("<b>ASK</b>") and "flow guard" in text
    assert "Why this asks:" in text and "a sensitive file (simulated)" in text
    assert "sends data to example.com" in text


async def test_tester_uses_the_chosen_mode(qtbot, services: Services):
    profile = services.profiles.ensure_default()
    services.profiles.set_permission_mode(profile.id, PermissionMode.PLAN)
    tab = RulesTab(services, profile_id=profile.id)
    qtbot.addWidget(tab)
    assert tab.test_mode.currentText() == "Plan"  # starts with the profile's mode
    await _decide(tab, "write_file", '{"path": "a.txt", "content": "x"}')
    assert tab.test_result.text().startswith("<b>DENY</b>")
    assert "plan mode" in tab.test_result.text()
    tab.test_mode.setCurrentIndex(tab.test_mode.findData(PermissionMode.ASK.value))
    tab.test_button.click()
    await wait_for(lambda: tab.test_result.text() not in ("", "Deciding…"))
    assert tab.test_result.text().startswith("<b>ASK</b>")


def test_tester_context_has_the_simulated_labels(qtbot, services: Services):
    tab = RulesTab(services)
    qtbot.addWidget(tab)
    tab.test_labels[FlowLabel.UNTRUSTED].setChecked(True)
    tab.test_mode.setCurrentIndex(tab.test_mode.findData(PermissionMode.AUTO.value))
    context = tab.test_context()
    assert context.mode is PermissionMode.AUTO
    assert context.flow is not None and context.flow.labels == {FlowLabel.UNTRUSTED}
    assert [c.text() for c in tab.test_labels.values()] == \
        ["read sensitive", "untrusted content", "read outside the project"]


def test_settings_passes_the_profile_to_the_tester(qtbot, services: Services):
    profile = services.profiles.ensure_default()
    services.profiles.set_permission_mode(profile.id, PermissionMode.AUTO)
    dialog = SettingsDialog(services, profile.id)
    qtbot.addWidget(dialog)
    assert dialog.rules_tab.test_mode.currentText() == "Auto"
    assert isinstance(dialog.sensitive_tab.additions, QPlainTextEdit)
