"""A deprecated saved model is kept but warned about, in the toolbar and the profile dialog."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from PySide6.QtCore import Qt

from app.core.agent.models.catalog import ModelInfo
from app.core.store.profiles import DEFAULT_MODEL
from app.ui.dialogs.profile import ProfileDialog
from app.ui.main_window import MainWindow
from tests.fakes.anthropic_server import fake_anthropic, fake_anthropic_env  # noqa: F401

OLD_DEFAULT = "claude-sonnet-4-5"  # the default before it was deprecated (EOL 2026-11-30)


def _window_with_model(qtbot, services, project, model: str) -> MainWindow:
    profile = services.profiles.ensure_default()
    services.profiles.update(replace(profile, model=model))  # as an existing database has it
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()  # (a window is fitted to its screen when it shows: resized after)
    window.resize(1400, 700)  # wide enough that the toolbar has room for the warning
    with qtbot.waitSignal(window.ready, timeout=5000):
        window.attach_services(services, project)
    return window


def test_toolbar_warns_about_the_old_default_and_keeps_it(qtbot, services, project):
    window = _window_with_model(qtbot, services, project, OLD_DEFAULT)
    # The toolbar lays out on the next pass.
    qtbot.waitUntil(window.profiles.model_warning.isVisible)
    text = window.profiles.model_warning.text()
    assert "2026-11-30" in text and DEFAULT_MODEL in text
    sentence = window.profiles.model_warning.toolTip()
    assert OLD_DEFAULT in sentence and "2026-11-30" in sentence and DEFAULT_MODEL in sentence
    # The person's choice stays: nothing was rewritten.
    assert services.profiles.get(window.profile_id).model == OLD_DEFAULT
    assert window.profiles.model_picker.currentText() == OLD_DEFAULT


def test_picking_a_current_model_clears_the_warning(qtbot, services, project):
    window = _window_with_model(qtbot, services, project, OLD_DEFAULT)
    editor = window.profiles.model_picker.lineEdit()
    editor.selectAll()
    qtbot.keyClicks(editor, DEFAULT_MODEL)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert services.profiles.get(window.profile_id).model == DEFAULT_MODEL
    qtbot.waitUntil(lambda: not window.profiles.model_warning.isVisible())
    assert window.profiles.model_warning.text() == ""


def test_a_current_model_shows_no_warning(qtbot, services, project):
    window = _window_with_model(qtbot, services, project, DEFAULT_MODEL)
    assert not window.profiles.model_warning.isVisibleTo(window)
    assert window.profiles.model_warning.text() == ""


def test_profile_dialog_warns_and_use_default_picks_the_newest_listed(qtbot, services):
    profile = replace(services.profiles.ensure_default(), model=OLD_DEFAULT)
    listed = [ModelInfo("claude-sonnet-5-5", line="sonnet"),
              ModelInfo(OLD_DEFAULT, line="sonnet", lifecycle="deprecated",
                        retires_at=date(2026, 11, 30))]
    dialog = ProfileDialog(profile, [m.id for m in listed], available=listed,
                           today=date(2026, 11, 23))
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.model_warning.isVisible()
    text = dialog.model_warning.text()
    assert "2026-11-30" in text and "in 7 days" in text
    assert "Suggested replacement: claude-sonnet-5-5." in text
    qtbot.mouseClick(dialog.use_default, Qt.MouseButton.LeftButton)
    assert dialog.model.currentText() == "claude-sonnet-5-5"
    assert not dialog.model_warning.isVisible()


async def test_the_providers_list_sets_the_default_and_the_warning(
        qtbot, services, project, fake_anthropic_env):  # noqa: F811
    fake_anthropic_env.models = [
        {"id": "claude-sonnet-6", "created_at": "2026-11-10T00:00:00Z", "line": "sonnet"},
        {"id": DEFAULT_MODEL, "created_at": "2026-08-01T00:00:00Z", "line": "sonnet"},
        {"id": OLD_DEFAULT, "created_at": "2025-09-29T00:00:00Z", "line": "sonnet",
         "lifecycle": "deprecated", "retires_at": "2026-11-30T00:00:00Z"},
    ]
    window = _window_with_model(qtbot, services, project, OLD_DEFAULT)
    await window.profiles.refresh_models()
    assert "Suggested replacement: claude-sonnet-6." in window.profiles.model_warning.toolTip()
    assert window.profiles.model_warning.text().endswith("use claude-sonnet-6")
    picker = window.profiles.model_picker
    offered = {picker.itemText(i) for i in range(picker.count())}
    assert {"claude-sonnet-6", DEFAULT_MODEL, OLD_DEFAULT} <= offered
    assert window.profiles.model_picker.currentText() == OLD_DEFAULT
