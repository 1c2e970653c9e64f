"""RulesTableModel: a valid Qt model; edits validate and take effect on the next decision."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from app.core.permissions.rules import PermissionRule
from app.ui.models.rules_model import RulesTableModel


@pytest.fixture
def model(qtbot, services) -> RulesTableModel:
    return RulesTableModel(services.permissions.rules)


def test_model_passes_qtmodeltester(qtmodeltester, model):
    qtmodeltester.check(model, force_py=True)


def test_rows_follow_evaluation_order(model, services):
    services.permissions.rules.add(PermissionRule(decision="deny", priority=500,
                                                  tool_name="shell_exec"))
    model.reload()
    first = model.index(0, RulesTableModel.COL_TOOL)
    assert model.data(first) == "shell_exec"
    assert model.data(model.index(0, RulesTableModel.COL_DECISION)) == "deny"


def test_inline_edit_changes_next_decision(model, services):
    row = model.row_of(next(r.id for r in services.permissions.rules.list()
                            if r.tool_name == "read_file"))
    assert services.permissions.decide("builtin", "read_file", {"path": "a"}).kind == "allow"
    assert model.setData(model.index(row, RulesTableModel.COL_DECISION), "deny")
    assert services.permissions.decide("builtin", "read_file", {"path": "a"}).kind == "deny"


@pytest.mark.parametrize("column, value, message", [
    (RulesTableModel.COL_PRIORITY, "high", "whole number"),
    (RulesTableModel.COL_DECISION, "sometimes", "Decision must be one of"),
    (RulesTableModel.COL_TOOL_PATTERN, "read_*", "not both"),   # tool_name already set
    (RulesTableModel.COL_SERVER, "two words", "whitespace"),
])
def test_invalid_edits_are_refused_with_message(qtbot, model, services, column, value, message):
    row = model.row_of(next(r.id for r in services.permissions.rules.list()
                            if r.tool_name == "read_file"))
    before = services.permissions.rules.list()
    with qtbot.waitSignal(model.edit_failed) as blocker:
        assert not model.setData(model.index(row, column), value)
    assert message in blocker.args[0]
    assert services.permissions.rules.list() == before


def test_add_and_delete(model, services):
    count = model.rowCount()
    row = model.add_rule(PermissionRule(decision="deny", tool_pattern="READ_*", priority=3))
    assert model.rowCount() == count + 1
    assert model.data(model.index(row, RulesTableModel.COL_TOOL_PATTERN)) == "READ_*"
    assert services.permissions.decide("builtin", "read_file", {"path": "a"}).kind == "deny"
    model.delete_rows([row])
    assert model.rowCount() == count
    assert services.permissions.decide("builtin", "read_file", {"path": "a"}).kind == "allow"


def test_external_change_refreshes_model(qtbot, model, services):
    count = model.rowCount()
    services.permissions.rules.add(PermissionRule(decision="ask", tool_name="x"))
    qtbot.waitUntil(lambda: model.rowCount() == count + 1)


def test_tooltip_and_roles(model):
    index = model.index(0, 0)
    assert isinstance(model.data(index, RulesTableModel.RuleRole), PermissionRule)
    assert "rule #" in model.data(index, Qt.ItemDataRole.ToolTipRole)


def test_settings_rules_tab_export_and_import(qtbot, services, tmp_path):
    # The "Test a call" box decides in a worker thread: tests/ui/test_settings_tester.py.
    from app.ui.dialogs.settings import RulesTab

    tab = RulesTab(services)
    qtbot.addWidget(tab)
    out = tmp_path / "rules.json"
    tab.export_rules(str(out))
    exported = json.loads(out.read_text())
    assert len(exported["rules"]) == tab.model.rowCount()
    services.permissions.rules.replace_all([])
    tab.import_rules(str(out))
    assert tab.model.rowCount() == len(exported["rules"])
    bad = tmp_path / "bad.json"
    bad.write_text('[{"decision": "nope"}]')
    tab.import_rules(str(bad))
    assert "Not imported" in tab.status.text()
    assert tab.model.rowCount() == len(exported["rules"])


def test_history_model_passes_qtmodeltester(qtmodeltester, services):
    from app.ui.models.history_model import HistoryTableModel

    services.audit.record(tool_name="read_file", server_id="builtin", tool_input={"path": "a"},
                          decision="allow", outcome="executed", output="x", duration_ms=2)
    services.audit.record(tool_name="shell_exec", server_id="builtin",
                          tool_input={"command": "rm -rf /"}, decision="deny",
                          outcome="denied", is_error=True, output="refused")
    model = HistoryTableModel(services.audit)
    qtmodeltester.check(model, force_py=True)
    assert model.rowCount() == 2
    model.set_filters(tool=None, decision="deny", errors_only=False)
    assert model.rowCount() == 1
    assert model.execution_at(0).tool_name == "shell_exec"


def test_history_names_the_sub_agent_that_made_a_call(services):
    from app.ui.models.history_model import HistoryTableModel

    services.audit.record(tool_name="read_file", server_id="builtin", tool_input={"path": "a"},
                          decision="allow", outcome="executed", output="x",
                          agent="orchestrator › reader")
    services.audit.record(tool_name="read_file", server_id="builtin", tool_input={"path": "b"},
                          decision="allow", outcome="executed", output="y")
    model = HistoryTableModel(services.audit)
    tools = {model.index(r, model.COL_TOOL).data() for r in range(model.rowCount())}
    assert tools == {"read_file (orchestrator › reader)", "read_file"}
