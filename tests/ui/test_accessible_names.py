"""A screen reader names every main input by its label: the prompt box, the Profile, Model
and Mode pickers, the tools list, the transcript and the conversation search."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QWidget

from app.ui.main_window import MainWindow

NAMES = {
    "prompt": "Request to the AI",
    "profile-picker": "Profile",
    "model-picker": "Model",
    "mode-picker": "Permission mode",
    "tools-tree": "Tools",
    "transcript": "Conversation",
}


@pytest.fixture
def window(qtbot, services, project) -> MainWindow:
    window = MainWindow()
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.ready, timeout=5000):
        window.attach_services(services, project)
    return window


@pytest.mark.parametrize("object_name, accessible", sorted(NAMES.items()))
def test_main_controls_have_accessible_names(window, object_name, accessible):
    widget = window.findChild(QWidget, object_name)
    assert widget is not None, object_name
    assert widget.accessibleName() == accessible
