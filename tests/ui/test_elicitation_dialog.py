"""The elicitation form: built from the schema, never pre-filled, validated; Send / Decline /
Cancel / close."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLineEdit, QListWidget

from app.core.tools.providers.mcp.elicit_schema import parse_form
from app.ui.dialogs.elicitation import ElicitationDialog
from tests.mcp_servers.human_loop_server import PERSON_FORM


def _dialog(qtbot, schema=None) -> ElicitationDialog:
    dialog = ElicitationDialog("crm", "Who are you?", parse_form(schema or PERSON_FORM))
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def _send(qtbot, dialog: ElicitationDialog) -> None:
    qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)


def _fill(dialog: ElicitationDialog, **values: object) -> None:
    for name, value in values.items():
        widget = dialog.inputs[name]
        if isinstance(widget, QLineEdit):
            widget.setText(str(value))
        elif isinstance(widget, QComboBox):
            widget.setCurrentIndex(widget.findData(value))
        else:
            assert isinstance(widget, QListWidget)
            for i in range(widget.count()):
                item = widget.item(i)
                checked = item.data(Qt.ItemDataRole.UserRole) in value  # type: ignore[operator]
                item.setCheckState(Qt.CheckState.Checked if checked else
                                   Qt.CheckState.Unchecked)


def test_one_editor_per_field_all_empty_with_defaults_only_hinted(qtbot):
    dialog = _dialog(qtbot)
    assert list(dialog.inputs) == ["name", "age", "email", "subscribe", "color"]
    assert dialog.entries() == {"name": "", "age": "", "email": "", "subscribe": None,
                                "color": None}
    age = dialog.inputs["age"]
    assert isinstance(age, QLineEdit) and "30" in age.placeholderText()
    assert "Who are you?" in dialog.message_label.text()
    assert not any(b.isDefault() or b.autoDefault() for b in
                   (dialog.accept_button, dialog.decline_button, dialog.cancel_button))


def test_send_with_valid_entries_accepts_with_exactly_what_was_entered(qtbot):
    dialog = _dialog(qtbot)
    _fill(dialog, name="Ada", age="36", subscribe=False)
    with qtbot.waitSignal(dialog.finished):
        _send(qtbot, dialog)
    reply = dialog.reply()
    assert reply.action == "accept"
    assert reply.content == {"name": "Ada", "age": 36, "subscribe": False}


def test_missing_and_invalid_entries_keep_the_dialog_open_and_are_named(qtbot):
    dialog = _dialog(qtbot)
    _fill(dialog, age="200", email="nope")
    _send(qtbot, dialog)
    assert dialog.isVisible()
    assert dialog.errors["name"].text() == "is required"
    assert "at most 150" in dialog.errors["age"].text()
    assert "email" in dialog.errors["email"].text()
    assert not dialog.errors["color"].isVisibleTo(dialog)
    _fill(dialog, name="Ada", age="40", email="ada@example.org")
    with qtbot.waitSignal(dialog.finished):
        _send(qtbot, dialog)
    assert dialog.reply().content == {"name": "Ada", "age": 40, "email": "ada@example.org"}


def test_multiple_choice(qtbot):
    schema = {"type": "object", "properties": {"fish": {
        "type": "array", "maxItems": 2,
        "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Salmon"},
                            {"const": "f3", "title": "Trout"}]}}}}
    dialog = _dialog(qtbot, schema)
    _fill(dialog, fish=["f1", "f2", "f3"])
    _send(qtbot, dialog)
    assert "at most 2" in dialog.errors["fish"].text()
    _fill(dialog, fish=["f3"])
    with qtbot.waitSignal(dialog.finished):
        _send(qtbot, dialog)
    assert dialog.reply().content == {"fish": ["f3"]}


def test_decline_sends_nothing(qtbot):
    dialog = _dialog(qtbot)
    _fill(dialog, name="Ada")
    with qtbot.waitSignal(dialog.finished):
        qtbot.mouseClick(dialog.decline_button, Qt.MouseButton.LeftButton)
    assert (dialog.reply().action, dialog.reply().content) == ("decline", None)


def test_cancel_close_and_escape_cancel(qtbot):
    for finish in ("cancel", "close", "escape"):
        dialog = _dialog(qtbot)
        _fill(dialog, name="Ada", age="3")
        with qtbot.waitSignal(dialog.finished):
            if finish == "cancel":
                qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
            elif finish == "close":
                dialog.close()
            else:
                qtbot.keyClick(dialog, Qt.Key.Key_Escape)
        assert (dialog.reply().action, dialog.reply().content) == ("cancel", None), finish


def test_enter_in_a_field_does_not_submit(qtbot):
    dialog = _dialog(qtbot)
    _fill(dialog, name="Ada", age="3")
    qtbot.keyClick(dialog.inputs["name"], Qt.Key.Key_Return)
    assert dialog.isVisible()
