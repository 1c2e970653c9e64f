"""The sandbox, said honestly in the UI: tools list, approval dialog, Settings, Configure…."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QLabel

from app.core.agent.events import ApprovalRequest
from app.core.sandbox import Sandbox, SandboxBackend, SandboxStatus
from app.core.settings_fields import SANDBOX_READ_ONLY, SANDBOX_REQUIRED
from app.core.store.profiles import ToolSetting
from app.core.tools.builtin.shell_exec import LEVEL_ALLOWLIST, LEVEL_ANY_SANDBOXED
from app.ui.dialogs.approval import ApprovalDialog, approval_sandbox
from app.ui.dialogs.settings import SettingsDialog
from app.ui.dialogs.tool_config import ToolConfigDialog
from app.ui.widgets.tools_panel import COL_SANDBOX, ToolsPanel

REASON = "bubblewrap is not installed"
WORKING = Sandbox(SandboxStatus(True, SandboxBackend.BUBBLEWRAP, "/usr/bin/bwrap"), True)
MISSING = Sandbox(SandboxStatus.unavailable(REASON), False)


def _use(services, sandbox: Sandbox) -> None:
    services.sandbox = sandbox
    services.permissions.sandbox = sandbox


@pytest.fixture
def profile_id(services) -> int:
    return services.profiles.ensure_default().id


def _panel(qtbot, services, profile_id) -> ToolsPanel:
    panel = ToolsPanel(services, profile_id)
    qtbot.addWidget(panel)
    return panel


# -- tools list ------------------------------------------------------------------------------

def test_tools_list_says_not_sandboxed_and_why(qtbot, services, profile_id):
    _use(services, MISSING)
    panel = _panel(qtbot, services, profile_id)
    item = panel.item("shell_exec")
    assert item.text(COL_SANDBOX) == "not sandboxed"
    assert f"Not sandboxed: {REASON}" in item.toolTip(COL_SANDBOX)
    assert not panel.notices.isHidden()
    assert f"Programs run without a sandbox: {REASON}." in panel.notices.text()
    # A tool that starts no programs shows nothing extra.
    assert panel.item("read_file").text(COL_SANDBOX) == ""
    assert panel.item("read_file").toolTip(COL_SANDBOX) == ""


def test_tools_list_says_refused_when_the_sandbox_is_required(qtbot, services, profile_id):
    _use(services, Sandbox(SandboxStatus.unavailable(REASON), True))
    panel = _panel(qtbot, services, profile_id)
    assert "refused" in panel.item("shell_exec").toolTip(COL_SANDBOX)
    assert "Programs are refused" in panel.notices.text()


def test_tools_list_says_sandboxed(qtbot, services, profile_id):
    _use(services, WORKING)
    panel = _panel(qtbot, services, profile_id)
    item = panel.item("shell_exec")
    assert item.text(COL_SANDBOX) == "sandboxed"
    assert item.toolTip(COL_SANDBOX).startswith("Sandboxed (bubblewrap)")
    assert "sandbox" not in panel.notices.text().lower()
    assert panel.item("read_file").text(COL_SANDBOX) == ""


# -- approval dialog -------------------------------------------------------------------------

def _shell_request(services, command="make test") -> ApprovalRequest:
    tool_input = {"command": command}
    spec = services.registry.get("shell_exec").spec
    decision = services.permissions.decide("builtin", "shell_exec", tool_input)
    return ApprovalRequest("tu_1", "shell_exec", "builtin", tool_input, spec, decision)


def test_approval_dialog_says_what_the_sandbox_allows(qtbot, services, project):
    config = {"write_folders": [".", "build"], "network": False}
    dialog = ApprovalDialog(_shell_request(services), None, project, sandbox=WORKING,
                            tool_config=config)
    qtbot.addWidget(dialog)
    label = dialog.findChild(QLabel, "approval-sandbox")
    assert label is not None and label is dialog.sandbox_label
    assert label.text() == ("Runs in the sandbox (bubblewrap): writes only inside the project "
                            "folder and build (.git stays read-only), no network.")
    assert dialog.findChild(QLabel, "approval-sandbox-warning") is None

    networked = ApprovalDialog(_shell_request(services), None, project, sandbox=WORKING,
                               tool_config={"network": True, "git_permission": "read_write"})
    qtbot.addWidget(networked)
    assert networked.sandbox_label is not None
    assert networked.sandbox_label.text() == ("Runs in the sandbox (bubblewrap): writes only "
                                              "inside the project folder, network allowed.")


def test_approval_sandbox_reads_the_profiles_config(qtbot, services, profile_id, project):
    _use(services, WORKING)
    services.profiles.set_tool(profile_id, ToolSetting(
        "shell_exec", True, {"write_folders": ["out"], "network": True}))
    request = _shell_request(services)
    kwargs = approval_sandbox(services, profile_id, request)
    assert kwargs["sandbox"] is WORKING
    dialog = ApprovalDialog(request, None, project, **kwargs)
    qtbot.addWidget(dialog)
    assert dialog.sandbox_label is not None
    assert dialog.sandbox_label.text() == ("Runs in the sandbox (bubblewrap): writes only inside "
                                           "out (.git stays read-only), network allowed.")


def test_approval_dialog_warns_when_not_sandboxed(qtbot, services, project):
    dialog = ApprovalDialog(_shell_request(services), None, project, sandbox=MISSING,
                            tool_config={})
    qtbot.addWidget(dialog)
    label = dialog.findChild(QLabel, "approval-sandbox-warning")
    assert label is not None
    assert label.text() == f"⚠ Not sandboxed: {REASON}."
    assert "#fb8f44" in label.styleSheet()  # warning-styled


def test_approval_dialog_without_programs_or_sandbox_shows_no_line(qtbot, services, project):
    spec = services.registry.get("read_file").spec
    tool_input = {"path": "a.txt"}
    decision = services.permissions.decide("builtin", "read_file", tool_input)
    request = ApprovalRequest("tu_2", "read_file", "builtin", tool_input, spec, decision)
    dialog = ApprovalDialog(request, None, project, sandbox=WORKING)
    qtbot.addWidget(dialog)
    assert dialog.sandbox_label is None
    older_caller = ApprovalDialog(_shell_request(services), None, project)
    qtbot.addWidget(older_caller)
    assert older_caller.sandbox_label is None


# -- Settings --------------------------------------------------------------------------------

def _settings(qtbot, services, profile_id) -> SettingsDialog:
    dialog = SettingsDialog(services, profile_id)
    qtbot.addWidget(dialog)
    return dialog


def test_settings_require_the_sandbox_round_trips(qtbot, services, profile_id):
    _use(services, WORKING)
    dialog = _settings(qtbot, services, profile_id)
    group = dialog.sandbox_group
    assert group.title() == "Sandbox"
    assert group.status.text().startswith("✓ Sandboxed (bubblewrap at /usr/bin/bwrap)")
    assert group.required.isChecked()
    # The field's help is the checkbox's own text (one sentence), as in a Configure… dialog.
    assert "instead of running them unsandboxed" in group.required.text()

    group.required.setChecked(False)
    dialog._save()
    assert services.settings.get(SANDBOX_REQUIRED.key) is False
    assert services.sandbox.required is False and services.permissions.sandbox.required is False

    again = _settings(qtbot, services, profile_id)
    assert not again.sandbox_group.required.isChecked()
    again.sandbox_group.required.setChecked(True)
    again._save()
    assert services.settings.get(SANDBOX_REQUIRED.key) is True
    assert services.sandbox.required is True


def test_settings_untouched_box_is_not_pinned(qtbot, services, profile_id):
    _use(services, MISSING)
    assert services.settings.get(SANDBOX_REQUIRED.key) is None  # a fresh database
    dialog = _settings(qtbot, services, profile_id)
    assert not dialog.sandbox_group.required.isChecked()
    assert dialog.sandbox_group.status.text() == f"⚠ Not sandboxed: {REASON}."
    dialog._save()
    assert services.settings.get(SANDBOX_REQUIRED.key) is None  # still follows the default


async def test_settings_read_only_folders_reach_the_sandbox_and_the_view(
        qtbot, services, profile_id, tmp_path):
    from tests.sandbox_support import STATUS
    if not STATUS.available:
        pytest.skip("needs a sandbox")
    _use(services, Sandbox(STATUS, True))
    datasets = tmp_path / "datasets"
    datasets.mkdir()
    services.project_root = tmp_path / "project"
    services.project_root.mkdir(exist_ok=True)
    dialog = _settings(qtbot, services, profile_id)
    group = dialog.sandbox_group
    group.read_only.setPlainText(f"{datasets}\n\n")
    dialog._save()
    assert services.settings.get(SANDBOX_READ_ONLY.key) == [str(datasets)]
    assert services.sandbox.read_only == (datasets,)
    assert services.permissions.sandbox.read_only == (datasets,)
    await group.show_view()  # in a worker thread: it walks the project
    text = group.view.toPlainText()
    assert f"{datasets}" in text and "added in Settings → Sandbox" in text
    assert f"writable         {services.project_root.resolve()}" in text


async def test_the_view_is_worked_out_off_the_gui_thread(qtbot, services, profile_id,
                                                        tmp_path, monkeypatch):
    """It walks the project and reads its git and venv files: never on the window's thread."""
    import threading

    import app.ui.dialogs.sandbox_settings as sandbox_settings
    from tests.sandbox_support import STATUS
    if not STATUS.available:
        pytest.skip("needs a sandbox")
    _use(services, Sandbox(STATUS, True))
    services.project_root = tmp_path / "project"
    services.project_root.mkdir(exist_ok=True)
    threads: list[threading.Thread] = []
    real = sandbox_settings.sandbox_view

    def recording(confinement):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread())
        return real(confinement)

    monkeypatch.setattr(sandbox_settings, "sandbox_view", recording)
    dialog = _settings(qtbot, services, profile_id)
    group = dialog.sandbox_group
    listing = group.show_view()
    assert not group.view.isHidden() and "Looking" in group.view.toPlainText()
    await listing
    assert threads and threads[0] is not threading.main_thread()
    assert "writable" in group.view.toPlainText()


# -- Configure… ------------------------------------------------------------------------------

def _level_combo(qtbot, services, sandbox: SandboxStatus | None, config=None):
    spec = services.registry.get("shell_exec").spec
    dialog = ToolConfigDialog(spec, config or {}, None, sandbox=sandbox)
    qtbot.addWidget(dialog)
    combo = dialog.inputs["program_level"]
    assert isinstance(combo, QComboBox)
    model = combo.model()
    assert isinstance(model, QStandardItemModel)
    return dialog, combo, model.item(combo.findData(LEVEL_ANY_SANDBOXED))


def test_configure_disables_any_program_without_a_sandbox(qtbot, services):
    dialog, combo, item = _level_combo(qtbot, services, MISSING.status)
    assert not item.isEnabled()
    assert REASON in item.toolTip()
    assert combo.currentData() == LEVEL_ALLOWLIST
    note = dialog.findChild(QLabel, "sandbox-program_level")
    assert note is not None and REASON in note.text()
    assert "Any program, sandboxed" in note.text()
    # The allowlist level stays selectable.
    model = combo.model()
    assert model.item(combo.findData(LEVEL_ALLOWLIST)).isEnabled()


def test_configure_says_a_saved_sandbox_level_runs_nothing_without_one(qtbot, services):
    dialog, combo, _item = _level_combo(qtbot, services, MISSING.status,
                                        {"program_level": LEVEL_ANY_SANDBOXED})
    assert combo.currentData() == LEVEL_ANY_SANDBOXED  # the saved value is not changed silently
    note = dialog.findChild(QLabel, "sandbox-program_level")
    assert note is not None and "runs nothing" in note.text()


def test_configure_enables_any_program_with_a_sandbox(qtbot, services):
    dialog, combo, item = _level_combo(qtbot, services, WORKING.status)
    assert item.isEnabled()
    assert dialog.findChild(QLabel, "sandbox-program_level") is None
    combo.setCurrentIndex(combo.findData(LEVEL_ANY_SANDBOXED))
    dialog._try_accept()
    assert dialog.config()["program_level"] == LEVEL_ANY_SANDBOXED


def test_configure_from_tools_panel_uses_the_apps_sandbox(qtbot, services, profile_id):
    _use(services, MISSING)
    panel = _panel(qtbot, services, profile_id)
    dialog = panel.open_configure("shell_exec")
    combo = dialog.inputs["program_level"]
    model = combo.model()
    assert not model.item(combo.findData(LEVEL_ANY_SANDBOXED)).isEnabled()
    dialog.reject()


def test_configure_help_is_shown_under_each_field(qtbot, services):
    dialog, _combo, _item = _level_combo(qtbot, services, WORKING.status)
    for key in ("program_level", "write_folders", "git_permission"):
        hint = dialog.findChild(QLabel, f"help-{key}")
        assert hint is not None and hint.wordWrap() and hint.text(), key
    network = dialog.inputs["network"]
    assert network.text() == "Let commands reach the network (package installs, downloads)."
    rest = dialog.findChild(QLabel, "help-network")
    assert rest is not None and rest.text() == "Off: the sandbox has no network at all."
    assert Qt.TextFormat.PlainText == rest.textFormat()


def test_sandbox_line_for_a_tool_that_only_reads(services):
    from app.ui.dialogs.approval import sandbox_line

    grep = services.registry.get("grep_search").spec
    assert sandbox_line(grep, {"pattern": "x"}, WORKING) == (
        "Runs in the sandbox (bubblewrap): writes nowhere, no network.", True)
    git = services.registry.get("git_ops").spec
    assert sandbox_line(git, {"action": "status"}, WORKING) == (
        "Runs in the sandbox (bubblewrap): writes nowhere, no network.", True)
    assert sandbox_line(services.registry.get("read_file").spec, {}, WORKING) is None
