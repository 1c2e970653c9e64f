"""Tools list: checkboxes enable tools for the profile; Configure validates and saves."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from app.core.tools.base import RiskLevel, ToolCategory, ToolSpec
from app.ui.dialogs.tool_config import ToolConfigDialog
from app.ui.widgets.tools_panel import ToolsPanel


@pytest.fixture
def panel(qtbot, services):
    profile = services.profiles.ensure_default()
    widget = ToolsPanel(services, profile.id)
    qtbot.addWidget(widget)
    return widget


def _spec(name: str, category=ToolCategory.EXECUTION) -> ToolSpec:
    return ToolSpec(name, f"{name} tool", {"type": "object"}, category, RiskLevel.HIGH)


def test_checkbox_reflects_and_changes_profile(panel, services):
    profile_id = panel.profile_id
    item = panel.item("read_file")
    assert item.checkState(0) == Qt.CheckState.Checked
    item.setCheckState(0, Qt.CheckState.Unchecked)
    assert "read_file" not in services.profiles.enabled_tools(profile_id)
    item.setCheckState(0, Qt.CheckState.Checked)
    assert "read_file" in services.profiles.enabled_tools(profile_id)


def test_grouped_by_category_with_risk(panel):
    groups = [panel.tree.topLevelItem(i).text(0) for i in range(panel.tree.topLevelItemCount())]
    assert "Read only" in groups
    assert panel.item("read_file").text(1) == "low"


def test_shell_config_validates_program_names(qtbot, project):
    dialog = ToolConfigDialog(_spec("shell_exec"), {}, project)
    qtbot.addWidget(dialog)
    dialog._fields["allowed_commands"].setPlainText("git\n/usr/bin/rm\n")
    dialog._try_accept()
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert "not a program name" in dialog.error.text()
    dialog._fields["allowed_commands"].setPlainText("git\nls\ngit\n")
    dialog._fields["shell_timeout_s"].setValue(12)
    dialog._try_accept()
    assert dialog.config() == {"allowed_commands": ["git", "ls"], "shell_timeout_s": 12.0}


def test_write_dirs_relative_to_project_and_system_dirs_refused(qtbot, project):
    dialog = ToolConfigDialog(_spec("write_file", ToolCategory.FILE_SYSTEM),
                              {"allowed_write_dirs": ["doc"]}, project)
    qtbot.addWidget(dialog)
    (project / "out").mkdir()
    dialog.add_write_dir(str(project / "out"))
    dialog._try_accept()
    assert dialog.config() == {"allowed_write_dirs": ["doc", "out"]}
    dialog.add_write_dir("/etc")
    dialog._result = None
    dialog._try_accept()
    assert dialog.config() is None and "system folder" in dialog.error.text()


def test_web_search_key_goes_to_keyring_not_config(qtbot, project, memory_keyring):
    dialog = ToolConfigDialog(_spec("web_search", ToolCategory.READ_ONLY), {}, project)
    qtbot.addWidget(dialog)
    dialog._fields["provider"].setCurrentIndex(dialog._fields["provider"].findData("brave"))
    dialog._fields["brave_key"].setText("brave-secret")
    dialog._try_accept()
    config = dialog.config()
    assert config is not None and config["provider"] == "brave"
    assert "brave-secret" not in repr(config)
    assert memory_keyring.values[("tebiki", "brave_search_api_key")] == "brave-secret"


def test_unknown_tool_gets_json_editor(qtbot, project):
    dialog = ToolConfigDialog(_spec("mcp_thing"), {"a": 1}, project)
    qtbot.addWidget(dialog)
    dialog._fields["json"].setPlainText("[1]")
    dialog._try_accept()
    assert dialog.config() is None and "JSON object" in dialog.error.text()
    dialog._fields["json"].setPlainText('{"b": 2}')
    dialog._try_accept()
    assert dialog.config() == {"b": 2}


def test_configure_saves_to_profile(qtbot, panel, services):
    dialog = panel.open_configure("web_fetch")
    assert dialog.isVisible()
    dialog._fields["allow_private_network"].setChecked(True)
    with qtbot.waitSignal(panel.config_saved):
        dialog._try_accept()
    settings = services.profiles.tool_settings(panel.profile_id)["web_fetch"]
    assert settings.config["allow_private_network"] is True
    assert settings.enabled  # configuring keeps the checkbox state


def test_web_fetch_options_round_trip(qtbot, project):
    dialog = ToolConfigDialog(_spec("web_fetch", ToolCategory.READ_ONLY), {}, project)
    qtbot.addWidget(dialog)
    assert dialog._fields["main_content"].isChecked()  # the tool's own default
    dialog._fields["follow_cross_host_redirects"].setChecked(True)
    dialog._fields["main_content"].setChecked(False)
    dialog._try_accept()
    assert dialog.config() == {"http_timeout_s": 30.0, "allow_private_network": False,
                               "main_content": False, "follow_cross_host_redirects": True}


def test_custom_tools_appear_reload_and_report_broken_files(qtbot, services, fresh_data_dir):
    profile_id = services.profiles.ensure_default().id
    panel = ToolsPanel(services, profile_id)
    qtbot.addWidget(panel)
    assert "lint_docs" not in panel._items
    toml = fresh_data_dir / "tools.toml"
    toml.write_text('[lint_docs]\ndescription = "Lint the docs"\ncommand = "echo {path}"\n'
                    '[lint_docs.parameters.path]\ntype = "string"\nrequired = true\n')
    panel.reload_button.click()
    item = panel.item("lint_docs")
    groups = [panel.tree.topLevelItem(i).text(0) for i in range(panel.tree.topLevelItemCount())]
    assert "Server: custom" in groups
    assert item.checkState(0) == Qt.CheckState.Unchecked  # new tools start disabled
    assert panel.notices.isHidden() or "tools.toml" not in panel.notices.text()

    toml.write_text("[broken\n")
    panel.reload_button.click()
    assert "lint_docs" not in panel._items
    assert not panel.notices.isHidden()
    assert "tools.toml:1" in panel.notices.text()
