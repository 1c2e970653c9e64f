"""Settings tabs render and check their simple fields from the table (app.core.settings_fields)
with the Configure… dialog's inputs (app.ui.dialogs.field_inputs)."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QFormLayout, QLabel, QPlainTextEdit, QSpinBox, QWidget

from app.core.fields import Field, FieldKind
from app.core.settings_fields import (
    CHECKPOINT_MAX_FILE,
    CHECKPOINT_RETENTION_DAYS,
    CHECKPOINT_RETENTION_MB,
    CHECKPOINTS_ENABLED,
    MB,
    SANDBOX_READ_ONLY,
    SettingField,
)
from app.core.tools.base import RiskLevel, ToolCategory, ToolSpec
from app.core.tools.config_fields import ConfigField
from app.ui.dialogs.checkpoint_settings import CheckpointsTab
from app.ui.dialogs.field_inputs import add_row, field_input
from app.ui.dialogs.setting_form import SettingsForm
from app.ui.dialogs.tool_config import ToolConfigDialog


def _host(qtbot, form: QFormLayout) -> QWidget:
    host = QWidget()
    host.setLayout(form)
    qtbot.addWidget(host)
    return host


def test_integer_shows_its_unit_and_stores_the_stored_unit(qtbot, services):
    form = SettingsForm(services.settings, (CHECKPOINT_MAX_FILE, CHECKPOINT_RETENTION_MB))
    host = _host(qtbot, form)
    spin = form.input(CHECKPOINT_MAX_FILE)
    assert isinstance(spin, QSpinBox)
    assert (spin.minimum(), spin.maximum(), spin.value(), spin.suffix()) == (1, 4096, 10, " MB")
    assert [label.text() for label in host.findChildren(QLabel)][:1] == ["Size cap per file"]
    spin.setValue(7)
    assert form.value(CHECKPOINT_MAX_FILE) == 7 * MB
    cap = form.input(CHECKPOINT_RETENTION_MB)
    assert isinstance(cap, QSpinBox)
    cap.setValue(0)
    assert cap.text() == "no limit"  # the field's placeholder names its lowest value
    assert form.save()
    assert services.settings.read(CHECKPOINT_MAX_FILE) == 7 * MB
    assert services.settings.read(CHECKPOINT_RETENTION_MB) == 0


def test_a_tab_shows_the_defaults_for_garbage_in_the_store(qtbot, services):
    services.settings.set(CHECKPOINTS_ENABLED.key, "no")
    services.settings.set(CHECKPOINT_MAX_FILE.key, [1, 2])
    services.settings.set(CHECKPOINT_RETENTION_DAYS.key, -3)
    tab = CheckpointsTab(services)
    qtbot.addWidget(tab)
    assert tab.enabled.isChecked()
    assert tab.enabled.text() == CHECKPOINTS_ENABLED.help
    assert (tab.max_file_mb.value(), tab.retention_days.value()) == (10, 30)
    assert tab.save()
    assert services.settings.get(CHECKPOINTS_ENABLED.key) is True
    assert services.settings.get(CHECKPOINT_MAX_FILE.key) == 10 * MB


def test_a_value_the_field_refuses_is_not_saved_and_says_why(qtbot, services):
    notes = SettingField[str]("test.note", "Note", FieldKind.TEXT, "")
    servers = SettingField[dict]("test.servers", "Servers", FieldKind.MAPPING, {})
    form = SettingsForm(services.settings, (notes, servers), shown={notes.key: "kept"})
    host = _host(qtbot, form)
    editor = form.input(servers)
    assert isinstance(editor, QPlainTextEdit)
    editor.setPlainText("[1]")
    assert not form.save()
    assert form.error.text() == "Not saved: Servers must be a JSON object."
    assert services.settings.get(notes.key) is None  # nothing written while one is invalid
    editor.setPlainText('{"a": 1}')
    assert form.save() and form.error.isHidden()
    assert services.settings.read(servers) == {"a": 1}
    assert services.settings.read(notes) == "kept"
    assert host.findChild(QLabel, "settings-form-error") is form.error


def test_text_list_is_one_entry_per_line(qtbot, services):
    services.settings.write(SANDBOX_READ_ONLY, ("~/data", "/srv"))
    form = SettingsForm(services.settings, (SANDBOX_READ_ONLY,))
    host = _host(qtbot, form)
    edit = form.input(SANDBOX_READ_ONLY)
    assert isinstance(edit, QPlainTextEdit)
    assert edit.toPlainText() == "~/data\n/srv"
    assert edit.placeholderText() == SANDBOX_READ_ONLY.placeholder
    assert host.findChild(QLabel, f"help-{SANDBOX_READ_ONLY.key}").text() == \
        SANDBOX_READ_ONLY.help
    edit.setPlainText(" /a \n\n/b")
    assert form.value(SANDBOX_READ_ONLY) == ("/a", "/b")


def test_flag_takes_the_first_sentence_of_its_help(qtbot):
    flag = Field("f", "Flag", FieldKind.FLAG, help="Do it. Only when asked.")
    built = field_input(flag, True)
    form = QFormLayout()
    add_row(form, built)
    host = _host(qtbot, form)
    assert isinstance(built.widget, QCheckBox) and built.widget.text() == "Do it."
    assert built.widget.isChecked() and built.read is not None and built.read() is True
    assert host.findChild(QLabel, "help-f").text() == "Only when asked."


def test_the_configure_dialog_renders_the_new_kinds_too(qtbot, project):
    fields = (
        ConfigField("count", "Count", FieldKind.INTEGER, 5, minimum=1, maximum=9),
        ConfigField("names", "Names", FieldKind.TEXT_LIST, ("a",)),
        ConfigField("extra", "Extra", FieldKind.MAPPING),
        ConfigField("rows", "Rows", FieldKind.RECORDS),
    )
    spec = ToolSpec("kinds", "a tool", {"type": "object"}, ToolCategory.EXECUTION,
                    RiskLevel.HIGH, config_fields=fields)
    dialog = ToolConfigDialog(spec, {"count": 50, "rows": [{"x": 1}, 2]}, project)
    qtbot.addWidget(dialog)
    assert dialog.inputs["count"].value() == 9  # capped at the maximum
    assert dialog.inputs["names"].toPlainText() == "a"
    dialog.inputs["rows"].setPlainText('[{"x": 1}, 2]')
    dialog._try_accept()
    assert dialog.config() == {"count": 9, "names": ("a",), "extra": {}, "rows": ({"x": 1},)}
