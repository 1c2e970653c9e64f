"""The generic Configure… dialog: every ConfigField kind rendered, validated and saved."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
)

from app.core.tools.base import RiskLevel, ToolCategory, ToolSpec
from app.core.tools.config_fields import ConfigField, FieldKind
from app.ui.dialogs.tool_config import ToolConfigDialog

TRICKY = "Limit (>, <b>bold</b> & more"  # must display as written, not as markup

EVERY_KIND = (
    ConfigField("private", "Network", FieldKind.FLAG, False, help="Allow private addresses"),
    ConfigField("timeout_s", "Timeout", FieldKind.SECONDS, 30.0, help=TRICKY),
    ConfigField("max_bytes", "Output limit", FieldKind.BYTES, 50_000),
    ConfigField("mode", "Mode", FieldKind.CHOICE, "b",
                choices=(("a", "First"), ("b", "Second"), ("c", "Third"))),
    ConfigField("command", "Command", FieldKind.TEXT, "", placeholder="e.g. make"),
    ConfigField("checks", "Checks", FieldKind.TEXT_MAP, None,
                choices=(("lint", "Lint"), ("test", "Test"))),
    ConfigField("dirs", "Write folders", FieldKind.FOLDER_LIST, ("doc",)),
    ConfigField("programs", "Allowed programs", FieldKind.PROGRAM_LIST, ("ls",)),
    ConfigField("key", "API key", FieldKind.SECRET, secret_name="brave_search_api_key"),
)


def _spec(*fields: ConfigField, name: str = "every", description: str = "a tool") -> ToolSpec:
    return ToolSpec(name, description, {"type": "object"}, ToolCategory.EXECUTION,
                    RiskLevel.HIGH, config_fields=fields)


def _dialog(qtbot, spec: ToolSpec, config: dict, project) -> ToolConfigDialog:
    dialog = ToolConfigDialog(spec, config, project)
    qtbot.addWidget(dialog)
    return dialog


def test_every_kind_gets_its_widget_with_defaults(qtbot, project):
    dialog = _dialog(qtbot, _spec(*EVERY_KIND), {}, project)
    inputs = dialog.inputs
    assert isinstance(inputs["private"], QCheckBox) and not inputs["private"].isChecked()
    assert inputs["private"].text() == "Allow private addresses"
    assert isinstance(inputs["timeout_s"], QDoubleSpinBox) and inputs["timeout_s"].value() == 30
    assert isinstance(inputs["max_bytes"], QSpinBox) and inputs["max_bytes"].value() == 50_000
    combo = inputs["mode"]
    assert isinstance(combo, QComboBox) and combo.currentData() == "b"
    assert [combo.itemText(i) for i in range(combo.count())] == ["First", "Second", "Third"]
    assert isinstance(inputs["command"], QLineEdit)
    assert inputs["command"].placeholderText() == "e.g. make"
    assert isinstance(inputs["checks.lint"], QLineEdit)
    assert isinstance(inputs["checks.test"], QLineEdit)
    folders = inputs["dirs"]
    assert isinstance(folders, QListWidget) and folders.item(0).text() == "doc"
    buttons = {b.text() for b in dialog.findChildren(QPushButton)}
    assert {"Add folder…", "Remove"} <= buttons
    assert isinstance(inputs["programs"], QPlainTextEdit)
    assert inputs["programs"].toPlainText() == "ls"
    assert isinstance(inputs["key"], QLineEdit)
    assert inputs["key"].echoMode() == QLineEdit.EchoMode.Password
    assert "json" not in inputs  # declared fields replace the JSON editor

    dialog._try_accept()
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.config() == {"private": False, "timeout_s": 30.0, "max_bytes": 50_000,
                               "mode": "b", "command": "", "checks": {}, "dirs": ["doc"],
                               "programs": ["ls"]}


def test_labels_and_help_are_shown_as_plain_text(qtbot, project):
    dialog = _dialog(qtbot, _spec(*EVERY_KIND, description="Reads <a> & (>, b"), {}, project)
    texts = [label.text() for label in dialog.findChildren(QLabel)]
    help_label = dialog.findChild(QLabel, "help-timeout_s")
    assert help_label is not None and help_label.text() == TRICKY
    # Rendered as written: plain text, so Qt never parses it as markup.
    assert help_label.textFormat().name == "PlainText"
    assert "Timeout" in texts and "Write folders" in texts and "Lint" in texts
    intro = texts[0]
    assert "Reads &lt;a&gt; &amp; (&gt;, b" in intro  # escaped in the rich-text intro


def test_saved_values_are_shown_and_edits_saved(qtbot, project, memory_keyring):
    saved = {"private": True, "timeout_s": 12.5, "max_bytes": 1000, "mode": "c",
             "command": "make lint", "checks": {"test": "pytest"}, "dirs": ["doc", "out"],
             "programs": ["git", "make"], "unrelated": 1}
    dialog = _dialog(qtbot, _spec(*EVERY_KIND), saved, project)
    inputs = dialog.inputs
    assert inputs["private"].isChecked() and inputs["timeout_s"].value() == 12.5
    assert inputs["mode"].currentData() == "c" and inputs["checks.test"].text() == "pytest"
    inputs["private"].setChecked(False)
    inputs["timeout_s"].setValue(90)
    inputs["max_bytes"].setValue(2048)
    inputs["mode"].setCurrentIndex(inputs["mode"].findData("a"))
    inputs["command"].setText("  make all ")
    inputs["checks.lint"].setText("ruff check")
    inputs["checks.test"].setText("")
    (project / "build").mkdir()
    dialog.add_folder("dirs", str(project / "build"))
    inputs["programs"].setPlainText("git\n\nmake\ngit\n")
    inputs["key"].setText(" s3cret ")
    dialog._try_accept()
    assert dialog.config() == {"private": False, "timeout_s": 90.0, "max_bytes": 2048,
                               "mode": "a", "command": "make all", "checks": {"lint": "ruff check"},
                               "dirs": ["doc", "out", "build"], "programs": ["git", "make"],
                               "unrelated": 1}
    assert "s3cret" not in repr(dialog.config())
    assert memory_keyring.values[("tebiki", "brave_search_api_key")] == "s3cret"


def test_invalid_saved_values_show_the_default(qtbot, project):
    saved = {"timeout_s": -1, "mode": "zzz", "private": "yes", "programs": "rm -rf /"}
    dialog = _dialog(qtbot, _spec(*EVERY_KIND), saved, project)
    assert dialog.inputs["timeout_s"].value() == 30
    assert dialog.inputs["mode"].currentData() == "b"
    assert not dialog.inputs["private"].isChecked()
    assert dialog.inputs["programs"].toPlainText() == "ls"


def test_validation_messages_come_from_the_fields(qtbot, project, memory_keyring):
    dialog = _dialog(qtbot, _spec(*EVERY_KIND), {}, project)
    dialog.inputs["programs"].setPlainText("git\n/usr/bin/rm\n")
    dialog._try_accept()
    assert dialog.result() != QDialog.DialogCode.Accepted and dialog.config() is None
    assert "not a program name" in dialog.error.text()
    dialog.inputs["programs"].setPlainText("git")
    dialog.add_folder("dirs", "/etc")
    dialog._try_accept()
    assert dialog.config() is None and "system folder" in dialog.error.text()
    assert not memory_keyring.values  # nothing stored while the form is invalid


def test_a_tool_without_fields_gets_the_json_editor(qtbot, project):
    from dataclasses import replace

    built_in = _dialog(qtbot, _spec(name="plain"), {"a": 1}, project)
    assert built_in.no_options and "json" not in built_in.inputs  # "no options", no JSON
    built_in._try_accept()
    assert built_in.config() == {"a": 1}
    dialog = _dialog(qtbot, replace(_spec(name="mcp_thing"), server_id="things"), {"a": 1},
                     project)
    editor = dialog.inputs["json"]
    editor.setPlainText("[1]")
    dialog._try_accept()
    assert dialog.config() is None and "JSON object" in dialog.error.text()
    editor.setPlainText('{"b": 2}')
    dialog._try_accept()
    assert dialog.config() == {"b": 2}


class _FakeTool:
    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec

    async def execute(self, input, ctx):  # never called: only configured here
        raise AssertionError("not run in this test")


def test_configure_from_the_tools_panel_saves_the_fields(qtbot, services):
    from app.core.tools.providers.base import StaticProvider
    from app.ui.widgets.tools_panel import ToolsPanel

    spec = _spec(ConfigField("allow_private_network", "Network", FieldKind.FLAG, False),
                 name="fetchish")
    services.registry.register_provider(StaticProvider([_FakeTool(spec)], id="fake"))
    profile_id = services.profiles.ensure_default().id
    services.profiles.set_enabled(profile_id, "fetchish", True)
    panel = ToolsPanel(services, profile_id)
    qtbot.addWidget(panel)
    dialog = panel.open_configure("fetchish")
    dialog.inputs["allow_private_network"].setChecked(True)
    with qtbot.waitSignal(panel.config_saved):
        dialog._try_accept()
    settings = services.profiles.tool_settings(profile_id)["fetchish"]
    assert settings.config == {"allow_private_network": True}
    assert settings.enabled  # configuring keeps the checkbox state
