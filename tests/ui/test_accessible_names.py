"""A screen reader names every main input by its label: the prompt box, the Profile, Model
and Mode pickers, the tools list, the transcript and the conversation search."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QAccessible
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


LABELS = {"profile-picker": "Profile", "model-picker": "Model", "mode-picker": "Mode"}


def _labels_of(widget: QWidget) -> list[str]:
    interface = QAccessible.queryAccessibleInterface(widget)
    assert interface is not None
    return [other.text(QAccessible.Text.Name).strip()
            for other, relation in interface.relations(QAccessible.RelationFlag.Label)]


@pytest.mark.parametrize("object_name, label", sorted(LABELS.items()))
def test_pickers_are_labelled_by_the_label_in_front_of_them(window, object_name, label):
    # On Linux a combo box's accessible name is its value ("Default", "claude-…", "Ask"):
    # Qt and AT-SPI give the name through the label relation, which the toolbar did not set.
    widget = window.findChild(QWidget, object_name)
    assert label in _labels_of(widget)


def test_the_model_pickers_text_field_is_named(window):
    # The model picker is editable: its text field is a focus stop of its own.
    edit = window.findChild(QWidget, "model-picker").lineEdit()
    assert edit.accessibleName() == "Model"
