"""Tools list: checkboxes enable tools for the profile; Configure validates and saves."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.ui.widgets.tools_panel import ToolsPanel


@pytest.fixture
def panel(qtbot, services):
    profile = services.profiles.ensure_default()
    widget = ToolsPanel(services, profile.id)
    qtbot.addWidget(widget)
    return widget


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


def test_configure_saves_to_profile(qtbot, panel, services):
    dialog = panel.open_configure("web_fetch")
    assert dialog.isVisible()
    dialog.inputs["allow_private_network"].setChecked(True)
    with qtbot.waitSignal(panel.config_saved):
        dialog._try_accept()
    settings = services.profiles.tool_settings(panel.profile_id)["web_fetch"]
    assert settings.config["allow_private_network"] is True
    assert settings.enabled  # configuring keeps the checkbox state


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
