"""Configure… dialog of one tool: the settings its spec declares (``ToolSpec.config_fields``).

One generic dialog for every tool: each field is rendered by its kind (``FieldKind``, with the
inputs of app.ui.dialogs.field_inputs), checked with ``ConfigField.check_input`` (whose messages
say what to fix) and saved to the profile's ``agent_tool_permissions.config``, read again at the
next call. Secrets go to the OS keyring, never into the config. A tool that declares no fields
(MCP, custom) gets a JSON editor.

Every text that comes from a spec (labels, help, choices, descriptions) is shown as plain text:
a description with ``<`` or ``&`` must appear as written, not be parsed as markup.

An allowed-programs list names the programs not found on PATH under the box as they are typed
(app.ui.dialogs.program_check); a warning, saving stays allowed.

A choice that only makes sense in the OS sandbox (shell_exec's "Any program, sandboxed") cannot
be picked where the caller says there is no working sandbox (``sandbox``): the item is disabled
and a line under the field says why (which choices those are: app.ui.dialogs.sandbox_choices).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.core.fields import Field
from app.core.sandbox import SandboxStatus
from app.core.secrets import SecretStoreError, set_secret, set_session_secret
from app.core.tools.base import ToolSpec
from app.core.tools.config_fields import ConfigField, FieldKind
from app.ui.dialogs.field_inputs import (
    add_row,
    field_input,
    help_label,
    split_first_sentence,
    warning_style,
)
from app.ui.dialogs.program_check import ProgramCheck
from app.ui.dialogs.sandbox_choices import limit_to_sandbox
from app.ui.tones import Tone, tone_text

# Used when a field declares no default and the config has no valid value.
_EMPTY: dict[FieldKind, Any] = {
    FieldKind.FLAG: False, FieldKind.SECONDS: 30.0, FieldKind.BYTES: 50_000,
    FieldKind.INTEGER: 0, FieldKind.TEXT: "", FieldKind.TEXT_MAP: {},
    FieldKind.FOLDER_LIST: (), FieldKind.PROGRAM_LIST: (), FieldKind.TEXT_LIST: (),
    FieldKind.MAPPING: {}, FieldKind.RECORDS: (),
}
# The config of a tool that declares no fields (MCP, custom), edited as a whole.
_WHOLE_CONFIG = Field("json", "Configuration", FieldKind.MAPPING)


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
        summary, _rest = split_first_sentence(first_line)
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
        # The PATH check of each allowed-programs field, by field key.
        self.program_checks: dict[str, ProgramCheck] = {}

        for field in spec.config_fields:
            self._add_field(field, self._initial(field, config))
        # A built-in tool without fields has nothing to set; another provider's tool (MCP,
        # custom) keeps its configuration as JSON.
        self.no_options = not spec.config_fields and spec.server_id == "builtin"
        if self.no_options:
            self.form.addRow(QLabel("This tool has no options."))
        elif not spec.config_fields:
            self._add_field(_WHOLE_CONFIG, config)

        self.error = QLabel()
        self.error.setObjectName("config-error")
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        tone_text(self.error, Tone.DANGER)
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

    # -- fields ----------------------------------------------------------------------------

    def _initial(self, field: ConfigField, config: dict[str, Any]) -> Any:
        """The saved value when it is valid, else the field's default (what the tool uses)."""
        if field.key in config:
            parsed = field.parse(config[field.key])
            if parsed is not None:
                return parsed
        if field.default is not None:
            return field.default
        return _EMPTY.get(field.kind)

    def _add_field(self, field: Field, value: Any) -> None:
        built = field_input(field, value, pick_folder=self._pick_folder,
                            limit_choices=lambda combo: limit_to_sandbox(combo, self.sandbox))
        self.inputs.update(built.inputs)
        if built.read is not None:
            self._readers[field.key] = built.read
        if field.kind is FieldKind.PROGRAM_LIST and built.extra is None:
            edit = built.widget
            assert isinstance(edit, QPlainTextEdit)
            built.extra = help_label("", f"missing-{field.key}", warning_style)
            self.program_checks[field.key] = ProgramCheck(edit, built.extra)
        add_row(self.form, built)

    def _pick_folder(self, field: Field) -> None:
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
        if self.no_options:
            return dict(self._original)
        if not self.spec.config_fields:
            value: dict[str, Any] = self._readers[_WHOLE_CONFIG.key]()
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
