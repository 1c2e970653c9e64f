"""Permission modes and flow labels in the main window: the toolbar's Mode picker, the first-run
mode panel, the flow chip (labels, reset, trust) and the one-time notices — none of them
modal."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget

from app.core.agent.events import FlowChanged
from app.core.permission_mode import PermissionMode
from app.core.permissions.flow import FlowLabel, FlowSource, FlowState
from app.core.services import Services
from app.core.settings_fields import PENDING_NOTICES, PERMISSION_MODE_CHOSEN
from app.core.store.migrations import DEFAULTS_CHANGED_NOTICE
from app.core.store.profiles import AgentProfile, ToolSetting
from app.ui.ai_panel.notice_bar import NoticeBar
from app.ui.ai_panel.panel import AIPanel
from app.ui.main_window import MainWindow
from tests.fakes.anthropic_server import (  # noqa: F401
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.ui.conftest import make_ai_panel, wait_for

SECRET_READ = FlowSource(FlowLabel.READ_SENSITIVE, "~/.aws/credentials", "read_file",
                         "2026-01-02T10:32:00+00:00")
WEB_PAGE = FlowSource(FlowLabel.UNTRUSTED, "https://example.com/page", "web_fetch",
                      "2026-01-02T10:35:00+00:00")


@pytest.fixture
def window(qtbot, services: Services, project: Path) -> MainWindow:
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=5000):
        win.attach_services(services, project)
    _wait_for_first_run_panel(qtbot, win.ai_panel)
    return win


def _wait_for_first_run_panel(qtbot, panel: AIPanel) -> None:
    # Built after the panel's first paint; a widget added to a shown layout shows one event
    # later.
    choice = panel.mode_choice
    qtbot.waitUntil(lambda: choice.intro_checked and (
        choice.mode_intro is None or choice.mode_intro.isVisible()), timeout=5000)


def _panel(qtbot, services: Services, project: Path | None) -> AIPanel:
    panel = make_ai_panel(qtbot, services, project, size=(800, 600), show=True)
    _wait_for_first_run_panel(qtbot, panel)
    return panel


def _pick_mode(window: MainWindow, mode: PermissionMode) -> None:
    index = window.profiles.mode_picker.findData(mode.value)
    window.profiles.mode_picker.setCurrentIndex(index)
    window.profiles.mode_picker.activated.emit(index)  # what a person's choice emits


# -- the toolbar's Mode picker -------------------------------------------------------------


def test_mode_picker_offers_the_three_modes_with_their_descriptions(window: MainWindow):
    picker = window.profiles.mode_picker
    assert picker.isEnabled()
    assert [picker.itemText(i) for i in range(picker.count())] == ["Ask", "Auto", "Plan"]
    for i, mode in enumerate(PermissionMode):
        assert picker.itemData(i, Qt.ItemDataRole.ToolTipRole) == mode.description
    assert picker.currentText() == "Ask"  # a new profile asks
    assert PermissionMode.ASK.description in picker.toolTip()


def test_mode_picker_is_disabled_until_services_are_attached(qtbot):
    shell = MainWindow()
    qtbot.addWidget(shell)
    assert not shell.profiles.mode_picker.isEnabled()
    assert shell.close()


def test_picking_a_mode_saves_it_to_the_profile_at_once(window: MainWindow,
                                                        services: Services):
    _pick_mode(window, PermissionMode.AUTO)
    assert services.profiles.get(window.profile_id).permission_mode is PermissionMode.AUTO
    assert PermissionMode.AUTO.description in window.profiles.mode_picker.toolTip()
    assert "Auto" in window.status_label.text()
    # Choosing in the toolbar counts as the first-run choice: the panel goes away.
    assert services.settings.get(PERMISSION_MODE_CHOSEN.key) is True
    assert window.ai_panel.mode_choice.mode_intro is None


def test_mode_picker_follows_profile_switches(window: MainWindow, services: Services):
    other = services.profiles.create(AgentProfile(name="Planner"))
    assert other.id is not None
    services.profiles.set_permission_mode(other.id, PermissionMode.PLAN)
    first = window.profile_id
    window.profiles.set_profile(other.id)
    assert window.profiles.mode_picker.currentText() == "Plan"
    _pick_mode(window, PermissionMode.AUTO)  # saved to the profile in use, not the first
    assert services.profiles.get(other.id).permission_mode is PermissionMode.AUTO
    assert services.profiles.get(first).permission_mode is PermissionMode.ASK
    window.profiles.set_profile(first)
    assert window.profiles.mode_picker.currentText() == "Ask"


# -- the first-run panel ---------------------------------------------------------------------


def test_first_run_panel_comes_after_the_panel_is_ready(qtbot, services: Services,
                                                       project: Path):
    # Not built with the panel: typing and Send do not need it (start-up time).
    panel = make_ai_panel(qtbot, services, project, size=(800, 600), show=True)
    assert panel.mode_choice.mode_intro is None and not panel.mode_choice.intro_checked
    assert panel.prompt.isEnabled()
    _wait_for_first_run_panel(qtbot, panel)
    assert panel.mode_choice.mode_intro is not None and panel.mode_choice.mode_intro.isVisible()


def test_first_run_panel_is_not_built_when_a_mode_is_chosen_first(
        qtbot, services: Services, project: Path):
    panel = make_ai_panel(qtbot, services, project, size=(800, 600), show=True)
    panel.choose_permission_mode(PermissionMode.AUTO.value)  # before the panel came
    _wait_for_first_run_panel(qtbot, panel)
    assert panel.mode_choice.mode_intro is None


def test_first_run_panel_is_shown_and_not_modal(window: MainWindow):
    intro = window.ai_panel.mode_choice.mode_intro
    assert intro is not None and intro.isVisible()
    assert QApplication.activeModalWidget() is None
    assert window.ai_panel.prompt.isEnabled()  # the window stays usable behind it
    texts = {mode: intro.findChild(QWidget, f"mode-intro-{mode.value}-description").text()
             for mode in PermissionMode}
    assert texts == {mode: mode.description for mode in PermissionMode}
    assert [b.text() for b in intro.buttons.values()] == ["Ask", "Auto", "Plan"]
    assert intro.buttons[PermissionMode.ASK].isChecked()  # the profile's current mode
    assert intro.use_button.text() == "Use this mode"


def test_using_a_mode_from_the_panel_saves_it_and_updates_the_toolbar(
        window: MainWindow, services: Services):
    intro = window.ai_panel.mode_choice.mode_intro
    assert intro is not None
    intro.buttons[PermissionMode.PLAN].click()
    intro.use_button.click()
    assert services.profiles.get(window.profile_id).permission_mode is PermissionMode.PLAN
    assert window.profiles.mode_picker.currentText() == "Plan"
    assert services.settings.get(PERMISSION_MODE_CHOSEN.key) is True
    assert window.ai_panel.mode_choice.mode_intro is None and not intro.isVisible()


def test_panel_is_not_shown_once_a_mode_was_chosen(qtbot, services: Services, project: Path):
    services.settings.set(PERMISSION_MODE_CHOSEN.key, True)
    panel = _panel(qtbot, services, project)
    assert panel.mode_choice.mode_intro is None


# -- the flow chip ---------------------------------------------------------------------------


def test_chip_is_clean_for_a_new_conversation(qtbot, services: Services, project: Path):
    panel = _panel(qtbot, services, project)
    chip = panel.flow.chip
    assert chip.text().endswith("clean")
    assert not chip.reset_action.isEnabled()  # nothing to reset
    assert "Nothing sensitive" in chip.toolTip()


def test_chip_shows_flow_changed_events_with_colour_and_sources(qtbot, services: Services,
                                                               project: Path):
    panel = _panel(qtbot, services, project)
    chip = panel.flow.chip
    clean_style = chip.styleSheet()
    panel.handle_event(FlowChanged("read sensitive", (SECRET_READ, WEB_PAGE)))
    assert chip.text().endswith("read sensitive")
    assert chip.styleSheet() != clean_style and "#cf222e" in chip.styleSheet()
    tip = chip.toolTip()
    assert SECRET_READ.describe() in tip and WEB_PAGE.describe() in tip
    assert "Read sensitive:" in tip and "Untrusted content:" in tip
    panel.handle_event(FlowChanged("untrusted content", (WEB_PAGE,)))
    assert chip.text().endswith("untrusted content")
    assert SECRET_READ.describe() not in chip.toolTip()


async def test_chip_shows_the_labels_of_an_opened_conversation_and_resets_them(
        qtbot, services: Services, project: Path):
    conversation = services.conversations.create(title="secrets")
    services.conversations.set_flow(conversation.id, FlowState([SECRET_READ]).to_json())
    panel = _panel(qtbot, services, project)
    panel.conversations.open(conversation.id)
    chip = panel.flow.chip
    assert chip.text().endswith("read sensitive")
    assert SECRET_READ.describe() in chip.toolTip()
    assert chip.reset_action.isEnabled()

    chip.reset_action.trigger()
    assert panel.session is not None and not panel.session.flow.labels
    assert chip.text().endswith("clean")

    panel.new_conversation()
    assert chip.text().endswith("clean")
    await panel.shutdown()


async def test_trusting_the_project_applies_to_new_sessions(qtbot, services: Services,
                                                      project: Path):
    conversation = services.conversations.create(title="work")
    panel = _panel(qtbot, services, project)
    panel.conversations.open(conversation.id)
    assert panel.session is not None and panel.session.project_trusted is False
    messages: list[str] = []
    panel.status_message.connect(messages.append)
    chip = panel.flow.chip
    chip.menu_.aboutToShow.emit()
    assert chip.trust_action.isEnabled() and not chip.trust_action.isChecked()
    assert project.name in chip.trust_action.text()
    assert "started or reopened after" in chip.trust_note.text()

    chip.trust_action.trigger()  # checks it
    assert services.is_trusted(project) and chip.trust_action.isChecked()
    assert "applies to conversations started or reopened" in messages[-1]
    assert panel.session.project_trusted is False  # the open conversation keeps its trust
    panel.conversations.open(conversation.id)  # reopened: a new session, trusted
    assert panel.session is not None and panel.session.project_trusted is True

    chip.trust_action.trigger()  # unchecks it
    assert not services.is_trusted(project)
    assert "no longer trusted" in messages[-1]
    await panel.shutdown()


def test_trust_needs_an_open_folder(qtbot, services: Services):
    panel = _panel(qtbot, services, None)
    panel.flow.chip.menu_.aboutToShow.emit()
    assert not panel.flow.chip.trust_action.isEnabled()


async def test_a_run_that_reads_untrusted_files_updates_the_chip(
        qtbot, services: Services, project: Path, fake_anthropic_env):  # noqa: F811
    (project / "notes.txt").write_text("hello\n", encoding="utf-8")
    profile = services.profiles.ensure_default()
    assert profile.id is not None
    services.profiles.set_tool(profile.id, ToolSetting("read_file", True, {}))
    fake_anthropic_env.script(Response.tool_use("read_file", {"path": "notes.txt"}),
                              Response.text("Read it."))
    panel = _panel(qtbot, services, project)
    assert panel.flow.chip.text().endswith("clean")
    assert panel.send("read my notes")
    await wait_for(lambda: not panel.running, timeout=20)
    # The project is not marked trusted: its files are untrusted content.
    assert panel.flow.chip.text().endswith("untrusted content")
    assert "notes" in panel.flow.chip.toolTip() or project.name in panel.flow.chip.toolTip()
    await panel.shutdown()


# -- notices ---------------------------------------------------------------------------------


def test_notices_are_shown_once_and_can_be_dismissed(qtbot, services: Services,
                                                     project: Path):
    services.settings.set(PENDING_NOTICES.key, [DEFAULTS_CHANGED_NOTICE])
    panel = _panel(qtbot, services, project)
    assert QApplication.activeModalWidget() is None
    bars = panel.notices.view.bars() if panel.notices.view is not None else []
    assert len(bars) == 1
    assert DEFAULTS_CHANGED_NOTICE in bars[0].label.text()
    assert services.take_notices() == []  # taken: the next start shows nothing
    bars[0].dismiss_button.click()
    assert panel.notices.view.bars() == []

    again = _panel(qtbot, services, project)
    assert again.notices.view is None or again.notices.view.bars() == []


def test_notices_wait_for_the_first_show(qtbot, services: Services, project: Path):
    services.settings.set(PENDING_NOTICES.key, ["Something changed."])
    panel = make_ai_panel(qtbot, services, project)
    assert panel.notices.view is None  # not shown yet: still pending
    assert services.settings.get(PENDING_NOTICES.key) == ["Something changed."]
    panel.show()
    assert panel.notices.view is not None
    assert [b.label.text() for b in panel.notices.view.findChildren(NoticeBar)] == \
        ["ℹ Something changed."]
