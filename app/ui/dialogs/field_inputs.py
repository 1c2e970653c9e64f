"""One input per field kind (app.core.fields): what a tool's Configure… dialog and the Settings
tabs show for a field, how what the person entered is read back (then checked with the
field's ``check_input``, whose messages say what to fix), and the form row that puts the
field's label, its input and its help together.

Every text that comes from a field (label, help, choices, placeholder) is shown as plain text:
a text with ``<`` or ``&`` must appear as written, not be parsed as markup. A field's help is
one wrapped line under its input (a checkbox takes the help's first sentence as its own text and
shows the rest underneath).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from math import ceil
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.fields import Field, FieldKind, InvalidConfigValue
from app.core.secrets import secret_source
from app.ui.tones import StyleSource, Tone, follow_palette, text_style

HELP_STYLE = "QLabel { color: palette(placeholder-text); }"

_MAX_SECONDS = 24 * 3600
_MAX_BYTES = 100 * 1024 * 1024
_MAX_SPIN = 2**31 - 1  # a QSpinBox holds a C int


def plain_label(text: str) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    return label


def warning_style() -> str:
    return text_style(Tone.WARNING)


def help_label(text: str, name: str, style: StyleSource = HELP_STYLE) -> QLabel:
    label = plain_label(text)
    label.setObjectName(name)
    follow_palette(label, style)
    return label


def split_first_sentence(text: str) -> tuple[str, str]:
    """("First sentence.", "the rest") — a checkbox's text stays one short line."""
    for at, char in enumerate(text[:-1]):
        if char in ".?!" and text[at + 1] == " " and at > 0 and \
                not text[:at + 1].endswith(("e.g.", "i.e.", "etc.", "vs.")):
            return text[:at + 1], text[at + 2:].strip()
    return text, ""


@dataclass
class FieldInput:
    """A field's input: what goes in the form, its widgets, and how to read the value."""

    field: Field
    body: QWidget | QLayout             # what the form row holds
    # The input widgets by field key (TEXT_MAP: "key.subkey" for each line).
    inputs: dict[str, QWidget] = dataclass_field(default_factory=dict)
    # What the person entered, for ``field.check_input``; None: nothing to read (a secret,
    # which goes to the keyring).
    read: Callable[[], Any] | None = None
    help: str = ""                      # the line under the input ("" for none)
    extra: QLabel | None = None         # a warning under the help

    @property
    def widget(self) -> QWidget:
        """The input of a one-widget field (all but TEXT_MAP)."""
        return self.inputs[self.field.key]


def add_row(form: QFormLayout, built: FieldInput) -> None:
    """The field's label, its input and, under it, its help and the warning, if any."""
    body: QWidget | QLayout = built.body
    if built.help or built.extra is not None:
        box = QVBoxLayout()
        box.setSpacing(3)
        if isinstance(body, QWidget):
            box.addWidget(body)
        else:
            box.addLayout(body)
        if built.help:
            box.addWidget(help_label(built.help, f"help-{built.field.key}"))
        if built.extra is not None:
            box.addWidget(built.extra)
        body = box
    form.addRow(plain_label(built.field.label), body)


def field_input(field: Field, value: Any, *,
                limit_choices: Callable[[QComboBox], str | None] | None = None,
                pick_folder: Callable[[Field], None] | None = None) -> FieldInput:
    """The input for ``field`` showing ``value``. ``limit_choices`` may turn choices off (it
    returns the line saying why, shown under the field); ``pick_folder`` answers a FOLDER_LIST's
    "Add folder…"."""
    kind, key = field.kind, field.key
    if kind is FieldKind.FLAG:
        # The help's first sentence is the checkbox's own text (plain text: QCheckBox parses
        # no markup); the rest goes under it.
        text, rest = split_first_sentence(field.help or field.label)
        check = QCheckBox(text)
        check.setChecked(bool(value))
        return FieldInput(field, check, {key: check}, check.isChecked, rest)
    if kind in (FieldKind.SECONDS, FieldKind.BYTES, FieldKind.INTEGER):
        return _number_input(field, value)
    if kind is FieldKind.CHOICE:
        combo = QComboBox()
        for choice, label in field.choices:
            combo.addItem(label, choice)
        combo.setCurrentIndex(max(0, combo.findData(value)))
        note = limit_choices(combo) if limit_choices is not None else None
        return FieldInput(field, combo, {key: combo}, combo.currentData, field.help,
                          help_label(note, f"sandbox-{key}", warning_style) if note else None)
    if kind is FieldKind.TEXT:
        line = QLineEdit(str(value or ""))
        line.setPlaceholderText(field.placeholder)
        return FieldInput(field, line, {key: line}, lambda: line.text().strip(), field.help)
    if kind is FieldKind.TEXT_MAP:
        return _text_map_input(field, value if isinstance(value, dict) else {})
    if kind is FieldKind.FOLDER_LIST:
        return _folder_list_input(field, list(value or ()), pick_folder)
    if kind in (FieldKind.PROGRAM_LIST, FieldKind.TEXT_LIST):
        edit = QPlainTextEdit("\n".join(value or ()))
        edit.setPlaceholderText(field.placeholder or ("one program name per line, e.g. git"
                                if kind is FieldKind.PROGRAM_LIST else ""))
        edit.setMaximumHeight(140)
        return FieldInput(field, edit, {key: edit}, lambda: edit.toPlainText().splitlines(),
                          field.help)
    if kind in (FieldKind.MAPPING, FieldKind.RECORDS):
        return _json_input(field, value)
    if kind is FieldKind.SECRET:
        return _secret_input(field)
    raise AssertionError(f"unhandled field kind {kind}")


def _number_input(field: Field, value: Any) -> FieldInput:
    spin: QSpinBox | QDoubleSpinBox
    if field.kind is FieldKind.SECONDS:
        spin = QDoubleSpinBox()
        spin.setRange(1, _MAX_SECONDS)
        spin.setDecimals(1)
        spin.setSuffix(" s")
        spin.setValue(float(value))
        return FieldInput(field, spin, {field.key: spin}, spin.value, field.help)
    ispin = QSpinBox()
    if field.kind is FieldKind.BYTES:
        ispin.setRange(1, _MAX_BYTES)
        ispin.setSuffix(" bytes")
        ispin.setValue(int(value))
        return FieldInput(field, ispin, {field.key: ispin}, ispin.value, field.help)
    # INTEGER: shown in ``unit``s of ``unit_size`` stored units, stored back in the latter.
    size = field.unit_size
    lowest = ceil(field.minimum / size) if field.minimum is not None else -_MAX_SPIN
    highest = min(field.maximum // size, _MAX_SPIN) if field.maximum is not None else _MAX_SPIN
    ispin.setRange(lowest, highest)
    if field.unit:
        ispin.setSuffix(f" {field.unit}")
    if field.placeholder:  # the lowest value means something else ("no limit")
        ispin.setSpecialValueText(field.placeholder)
    ispin.setValue(round(int(value) / size))
    return FieldInput(field, ispin, {field.key: ispin}, lambda: ispin.value() * size,
                      field.help)


def _text_map_input(field: Field, value: dict[str, Any]) -> FieldInput:
    box = QFormLayout()
    lines: dict[str, QLineEdit] = {}
    for subkey, label in field.choices:
        line = QLineEdit(str(value.get(subkey, "")))
        line.setPlaceholderText(field.placeholder)
        lines[subkey] = line
        box.addRow(plain_label(label), line)
    return FieldInput(field, box, {f"{field.key}.{k}": line for k, line in lines.items()},
                      lambda: {k: line.text() for k, line in lines.items()}, field.help)


def _folder_list_input(field: Field, folders: list[str],
                       pick_folder: Callable[[Field], None] | None) -> FieldInput:
    folder_list = QListWidget()
    folder_list.addItems([str(d) for d in folders])
    folder_list.setMaximumHeight(120)
    add, remove = QPushButton("Add folder…"), QPushButton("Remove")
    if pick_folder is not None:
        add.clicked.connect(lambda: pick_folder(field))
    else:
        add.setEnabled(False)
    remove.clicked.connect(lambda: [folder_list.takeItem(folder_list.row(i))
                                    for i in folder_list.selectedItems()])
    row = QHBoxLayout()
    row.addWidget(add)
    row.addWidget(remove)
    row.addStretch(1)
    box = QVBoxLayout()
    box.addWidget(folder_list)
    box.addLayout(row)
    return FieldInput(field, box, {field.key: folder_list},
                      lambda: [folder_list.item(i).text().strip()
                               for i in range(folder_list.count())], field.help)


def _json_input(field: Field, value: Any) -> FieldInput:
    """A JSON editor for an object (MAPPING) or a list of objects (RECORDS)."""
    mapping = field.kind is FieldKind.MAPPING
    edit = QPlainTextEdit(json.dumps(dict(value) if mapping else list(value or ()), indent=2))

    def read() -> Any:
        try:
            parsed = json.loads(edit.toPlainText() or ("{}" if mapping else "[]"))
        except json.JSONDecodeError as exc:
            raise InvalidConfigValue(f"{field.label} is not valid JSON: {exc}") from exc
        if not isinstance(parsed, dict if mapping else list):
            raise InvalidConfigValue(f"{field.label} must be a JSON "
                                     f"{'object' if mapping else 'list of objects'}.")
        return parsed

    return FieldInput(field, edit, {field.key: edit}, read, field.help)


def _secret_input(field: Field) -> FieldInput:
    assert field.secret_name is not None, f"secret field {field.key} has no secret_name"
    line = QLineEdit()
    line.setEchoMode(QLineEdit.EchoMode.Password)
    # Never shows the secret, only where it would come from.
    line.setPlaceholderText({"keyring": "stored in the OS keyring",
                             "environment": "from the environment",
                             "session": "kept for this session only (no OS keyring)",
                             "none": field.placeholder or "not set"}[
                                 secret_source(field.secret_name)])
    return FieldInput(field, line, {field.key: line}, None, field.help)
