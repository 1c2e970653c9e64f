"""Configure… dialog of one tool: the settings its spec declares (``ToolSpec.config_fields``).

One generic dialog for every tool: each field is rendered by its kind (``FieldKind``), checked
with ``ConfigField.check_input`` (whose messages say what to fix) and saved to the profile's
``agent_tool_permissions.config``, read again at the next call. Secrets go to the OS keyring,
never into the config. A tool that declares no fields (MCP, custom) gets a JSON editor.

Every text that comes from a spec (labels, help, choices, descriptions) is shown as plain text:
a description with ``<`` or ``&`` must appear as written, not be parsed as markup. A field's
help is one wrapped line under its input (a checkbox takes the help's first sentence as its own
text and shows the rest underneath).

A choice that only makes sense in the OS sandbox (shell_exec's "Any program, sandboxed") cannot
be picked where the caller says there is no working sandbox (``sandbox``): the item is disabled
and a line under the field says why (which choices those are: app.ui.dialogs.sandbox_choices).
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.sandbox import SandboxStatus
from app.core.secrets import SecretStoreError, secret_source, set_secret, set_session_secret
from app.core.tools.base import ToolSpec
from app.core.tools.config_fields import ConfigField, FieldKind
from app.ui.dialogs.sandbox_choices import limit_to_sandbox

_MAX_SECONDS = 24 * 3600
_MAX_BYTES = 100 * 1024 * 1024
# Used when a field declares no default and the config has no valid value.
_EMPTY: dict[FieldKind, Any] = {
    FieldKind.FLAG: False, FieldKind.SECONDS: 30.0, FieldKind.BYTES: 50_000,
    FieldKind.TEXT: "", FieldKind.TEXT_MAP: {}, FieldKind.FOLDER_LIST: (),
    FieldKind.PROGRAM_LIST: (),
}

HELP_STYLE = "QLabel { color: palette(placeholder-text); }"
WARNING_STYLE = "QLabel { color: #9a6700; }"


def _plain_label(text: str) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    return label


def _help_label(text: str, name: str, style: str = HELP_STYLE) -> QLabel:
    label = _plain_label(text)
    label.setObjectName(name)
    label.setStyleSheet(style)
    return label


def _split_first_sentence(text: str) -> tuple[str, str]:
    """("First sentence.", "the rest") — a checkbox's text stays one short line."""
    for at, char in enumerate(text[:-1]):
        if char in ".?!" and text[at + 1] == " " and at > 0 and \
                not text[:at + 1].endswith(("e.g.", "i.e.", "etc.", "vs.")):
            return text[:at + 1], text[at + 2:].strip()
    return text, ""


class ToolConfigDialog(QDialog):
    def __init__(self, spec: ToolSpec, config: dict[str, Any], project_root: Path | None,
                 parent: QWidget | None = None, *,
                 sandbox: SandboxStatus | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
        # Unknown (None) counts as "no working sandbox": a choice that needs one stays disabled.
        self.sandbox = sandbox if sandbox is not None else SandboxStatus.unavailable(
            "no working sandbox is known")
        self.project_root = project_root
        self._original = dict(config)
        self._result: dict[str, Any] | None = None
        self._pending_secrets: dict[str, str] = {}
        self.setWindowTitle(f"Configure {spec.name}")
        self.setMinimumWidth(600)

        layout = QVBoxLayout(self)
        # The description's first sentence (the whole text is the tooltip): the fields matter
        # here, and a tall intro pushes them off a small screen.
        first_line = spec.description.splitlines()[0] if spec.description else ""
        summary, _rest = _split_first_sentence(first_line)
        intro = QLabel(f"<b>{html.escape(spec.name)}</b> — {html.escape(summary)}"
                       "<br><small>These are capabilities: limits the tool enforces itself. "
                       "Approval rules (Settings) decide whether a call asks first.</small>")
        intro.setTextFormat(Qt.TextFormat.RichText)
        intro.setWordWrap(True)
        intro.setToolTip("<qt>" + html.escape(spec.description).replace("\n", "<br>") + "</qt>")
        layout.addWidget(intro)
        # The fields scroll when the screen is too short for them all, rather than being
        # squeezed until the help lines overlap their inputs.
        self.form = QFormLayout()
        self._form_host = QWidget()
        self._form_host.setLayout(self.form)
        self._scroll = QScrollArea()
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scroll.setWidget(self._form_host)
        layout.addWidget(self._scroll, 1)
        # The input widgets by field key (TEXT_MAP: "key.subkey"); "json" for the JSON editor.
        self.inputs: dict[str, QWidget] = {}
        # How to read each field's value back from its widgets.
        self._readers: dict[str, Callable[[], Any]] = {}

        for field in spec.config_fields:
            self._add_field(field, config)
        if not spec.config_fields:
            self._add_json_editor(config)

        self.error = QLabel()
        self.error.setObjectName("config-error")
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setStyleSheet("color: #cf222e;")
        self.error.setWordWrap(True)
        self.error.hide()
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save |
                                   QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._try_accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._fit_to_screen()

    def _fit_to_screen(self) -> None:
        """As tall as the fields need (their help wrapped at the dialog's width), at most most
        of the screen; the rest scrolls."""
        layout = self.layout()
        assert layout is not None
        margins = layout.contentsMargins()
        scrollbar = self._scroll.verticalScrollBar().sizeHint().width()
        # Wide enough for what cannot wrap (a checkbox's text), as the fields never scroll
        # sideways.
        needed = (self._form_host.minimumSizeHint().width() + scrollbar + margins.left()
                  + margins.right())
        width = max(self.minimumWidth(), self.sizeHint().width(), needed)
        screen = self.screen()
        if screen is not None:
            width = min(width, int(screen.availableGeometry().width() * 0.9))
        inner = width - margins.left() - margins.right()
        fields = self._form_host.heightForWidth(inner - scrollbar)
        if fields < 0:
            fields = self._form_host.sizeHint().height()
        others = self.sizeHint().height() - self._scroll.sizeHint().height()
        height = others + fields + 4
        if screen is not None:
            height = min(height, int(screen.availableGeometry().height() * 0.85))
        self.resize(width, height)

    # -- field builders --------------------------------------------------------------------

    def _initial(self, field: ConfigField, config: dict[str, Any]) -> Any:
        """The saved value when it is valid, else the field's default (what the tool uses)."""
        if field.key in config:
            parsed = field.parse(config[field.key])
            if parsed is not None:
                return parsed
        if field.default is not None:
            return field.default
        return _EMPTY.get(field.kind)

    def _add_row(self, field: ConfigField, widget: QWidget | QHBoxLayout | QVBoxLayout |
                 QFormLayout, *, help_text: str | None = None,
                 extra: QLabel | None = None) -> None:
        """The field's label, its input and, under it, its help (``help_text`` overrides the
        field's; "" for none) and an optional ``extra`` line (a warning)."""
        text = field.help if help_text is None else help_text
        if text or extra is not None:
            box = QVBoxLayout()
            box.setSpacing(3)
            if isinstance(widget, QWidget):
                box.addWidget(widget)
            else:
                box.addLayout(widget)
            if text:
                box.addWidget(_help_label(text, f"help-{field.key}"))
            if extra is not None:
                box.addWidget(extra)
            widget = box
        self.form.addRow(_plain_label(field.label), widget)

    def _add_field(self, field: ConfigField, config: dict[str, Any]) -> None:
        kind, key = field.kind, field.key
        value = self._initial(field, config)
        if kind is FieldKind.FLAG:
            # The help's first sentence is the checkbox's own text (plain text: QCheckBox
            # parses no markup); the rest goes under it.
            text, rest = _split_first_sentence(field.help or field.label)
            check = QCheckBox(text)
            check.setChecked(bool(value))
            self.inputs[key] = check
            self._readers[key] = check.isChecked
            self._add_row(field, check, help_text=rest)
        elif kind is FieldKind.SECONDS:
            spin = QDoubleSpinBox()
            spin.setRange(1, _MAX_SECONDS)
            spin.setDecimals(1)
            spin.setSuffix(" s")
            spin.setValue(float(value))
            self.inputs[key] = spin
            self._readers[key] = spin.value
            self._add_row(field, spin)
        elif kind is FieldKind.BYTES:
            ispin = QSpinBox()
            ispin.setRange(1, _MAX_BYTES)
            ispin.setSuffix(" bytes")
            ispin.setValue(int(value))
            self.inputs[key] = ispin
            self._readers[key] = ispin.value
            self._add_row(field, ispin)
        elif kind is FieldKind.CHOICE:
            combo = QComboBox()
            for choice, label in field.choices:
                combo.addItem(label, choice)
            combo.setCurrentIndex(max(0, combo.findData(value)))
            self.inputs[key] = combo
            self._readers[key] = combo.currentData
            self._add_row(field, combo, extra=self._limit_to_sandbox(field, combo))
        elif kind is FieldKind.TEXT:
            line = QLineEdit(str(value or ""))
            line.setPlaceholderText(field.placeholder)
            self.inputs[key] = line
            self._readers[key] = lambda: line.text().strip()
            self._add_row(field, line)
        elif kind is FieldKind.TEXT_MAP:
            self._add_text_map(field, value if isinstance(value, dict) else {})
        elif kind is FieldKind.FOLDER_LIST:
            self._add_folder_list(field, list(value or ()))
        elif kind is FieldKind.PROGRAM_LIST:
            edit = QPlainTextEdit("\n".join(value or ()))
            edit.setPlaceholderText(field.placeholder or "one program name per line, e.g. git")
            edit.setMaximumHeight(140)
            self.inputs[key] = edit
            self._readers[key] = lambda: edit.toPlainText().splitlines()
            self._add_row(field, edit)
        elif kind is FieldKind.SECRET:
            self._add_secret(field)
        else:
            raise AssertionError(f"unhandled field kind {kind}")

    def _limit_to_sandbox(self, field: ConfigField, combo: QComboBox) -> QLabel | None:
        """The choices that need a sandbox, off when there is none, and the line saying why."""
        note = limit_to_sandbox(combo, self.sandbox)
        return _help_label(note, f"sandbox-{field.key}", WARNING_STYLE) if note else None

    def _add_text_map(self, field: ConfigField, value: dict[str, Any]) -> None:
        box = QFormLayout()
        lines: dict[str, QLineEdit] = {}
        for subkey, label in field.choices:
            line = QLineEdit(str(value.get(subkey, "")))
            line.setPlaceholderText(field.placeholder)
            lines[subkey] = line
            self.inputs[f"{field.key}.{subkey}"] = line
            box.addRow(_plain_label(label), line)
        self._readers[field.key] = lambda: {k: line.text() for k, line in lines.items()}
        self._add_row(field, box)

    def _add_folder_list(self, field: ConfigField, folders: list[str]) -> None:
        folder_list = QListWidget()
        folder_list.addItems([str(d) for d in folders])
        folder_list.setMaximumHeight(120)
        add, remove = QPushButton("Add folder…"), QPushButton("Remove")
        add.clicked.connect(lambda: self._pick_folder(field))
        remove.clicked.connect(lambda: [folder_list.takeItem(folder_list.row(i))
                                        for i in folder_list.selectedItems()])
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(remove)
        row.addStretch(1)
        box = QVBoxLayout()
        box.addWidget(folder_list)
        box.addLayout(row)
        self.inputs[field.key] = folder_list
        self._readers[field.key] = lambda: [folder_list.item(i).text().strip()
                                            for i in range(folder_list.count())]
        self._add_row(field, box)

    def _add_secret(self, field: ConfigField) -> None:
        assert field.secret_name is not None, f"secret field {field.key} has no secret_name"
        line = QLineEdit()
        line.setEchoMode(QLineEdit.EchoMode.Password)
        # Never shows the secret, only where it would come from.
        line.setPlaceholderText({"keyring": "stored in the OS keyring",
                                 "environment": "from the environment",
                                 "session": "kept for this session only (no OS keyring)",
                                 "none": field.placeholder or "not set"}[
                                     secret_source(field.secret_name)])
        self.inputs[field.key] = line
        self._add_row(field, line)

    def _pick_folder(self, field: ConfigField) -> None:
        start = str(self.project_root) if self.project_root else ""
        chosen = QFileDialog.getExistingDirectory(self, field.label, start)
        if chosen:
            self.add_folder(field.key, chosen)

    def add_folder(self, key: str, chosen: str) -> None:
        """Add a folder to a FOLDER_LIST field: relative when inside the project."""
        path = Path(chosen)
        if self.project_root is not None:
            try:
                chosen = str(path.resolve().relative_to(self.project_root)) or "."
            except ValueError:
                chosen = str(path)
        folder_list = self.inputs[key]
        assert isinstance(folder_list, QListWidget)
        folder_list.addItem(chosen)

    def _add_json_editor(self, config: dict[str, Any]) -> None:
        edit = QPlainTextEdit(json.dumps(config, indent=2))
        self.inputs["json"] = edit
        self.form.addRow(_plain_label("Configuration (JSON)"), edit)

    # -- result ----------------------------------------------------------------------------

    def config(self) -> dict[str, Any] | None:
        return self._result

    def _try_accept(self) -> None:
        try:
            self._result = self._collect()
        except ValueError as exc:  # InvalidConfigValue, or JSON that is not an object
            self._result = None
            self.error.setText(str(exc))
            self.error.show()
            return
        for name, value in self._pending_secrets.items():
            try:
                set_secret(name, value)
            except SecretStoreError:
                # No OS keyring: the key works until the app quits (the field says so next
                # time); the settings are saved either way.
                set_session_secret(name, value)
        self.accept()

    def _collect(self) -> dict[str, Any]:
        editor = self.inputs.get("json")
        if not self.spec.config_fields and isinstance(editor, QPlainTextEdit):
            try:
                value = json.loads(editor.toPlainText() or "{}")
            except json.JSONDecodeError as exc:
                raise ValueError(f"Configuration is not valid JSON: {exc}") from exc
            if not isinstance(value, dict):
                raise ValueError("Configuration must be a JSON object.")
            return value
        config = dict(self._original)
        self._pending_secrets = {}
        for field in self.spec.config_fields:
            if field.kind is FieldKind.SECRET:
                line = self.inputs[field.key]
                assert isinstance(line, QLineEdit) and field.secret_name is not None
                if line.text().strip():  # empty: keep the stored secret
                    self._pending_secrets[field.secret_name] = line.text().strip()
                continue
            config[field.key] = field.check_input(self._readers[field.key]())
        return config
