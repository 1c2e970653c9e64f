"""Configure… dialog of one tool: its capabilities (what it can do at all).

Fields are shown per tool; values are validated here with messages that say what to fix, and
saved to the profile's ``agent_tool_permissions.config``, read again at the next call.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.secrets import BRAVE_SEARCH_API_KEY, SecretStoreError, secret_source, set_secret
from app.core.tools.base import DEFAULT_ALLOWED_COMMANDS, ToolSpec

_PROGRAM_NAME = re.compile(r"^[A-Za-z0-9._+-]+$")
_SELF_EVAL_CHECKS = ("build", "lint", "type_check", "test")
_SYSTEM_DIRS = ("/", "/etc", "/usr", "/bin", "/sbin", "/boot", "/lib", "/var", "/System",
                "C:\\Windows")


class ToolConfigDialog(QDialog):
    def __init__(self, spec: ToolSpec, config: dict[str, Any], project_root: Path | None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
        self.project_root = project_root
        self._original = dict(config)
        self._result: dict[str, Any] | None = None
        self._pending_secret: str | None = None
        self.setWindowTitle(f"Configure {spec.name}")
        self.setMinimumWidth(520)

        layout = QVBoxLayout(self)
        summary = spec.description.splitlines()[0] if spec.description else ""
        intro = QLabel(f"<b>{spec.name}</b> — {summary}"
                       "<br><small>These are capabilities: limits the tool enforces itself. "
                       "Approval rules (Settings) decide whether a call asks first.</small>")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.form = QFormLayout()
        layout.addLayout(self.form)
        self._fields: dict[str, Any] = {}
        name = spec.name

        if name in ("write_file", "edit_file"):
            self._add_dir_list(config.get("allowed_write_dirs", []))
        if name == "shell_exec":
            commands = config.get("allowed_commands", list(DEFAULT_ALLOWED_COMMANDS))
            edit = QPlainTextEdit("\n".join(commands))
            edit.setPlaceholderText("one program name per line, e.g. git")
            edit.setMaximumHeight(140)
            self._fields["allowed_commands"] = edit
            self.form.addRow("Allowed programs", edit)
        if name in ("shell_exec", "self_eval"):
            self._add_seconds("shell_timeout_s", "Timeout", config.get("shell_timeout_s", 30.0))
        if name == "git_ops":
            combo = QComboBox()
            for value, label in (("disabled", "Disabled"), ("read_only", "Read only (status, "
                                 "diff, log, show, branches)"), ("read_write", "Read and write "
                                 "(also add, commit, branch, checkout)")):
                combo.addItem(label, value)
            combo.setCurrentIndex(max(0, combo.findData(config.get("git_permission",
                                                                    "read_only"))))
            self._fields["git_permission"] = combo
            self.form.addRow("Git permission", combo)
            hooks = QCheckBox("Run the repository's git hooks (off: hooks never run)")
            hooks.setChecked(bool(config.get("run_hooks", False)))
            self._fields["run_hooks"] = hooks
            self.form.addRow("", hooks)
        if name in ("web_fetch", "web_search"):
            self._add_seconds("http_timeout_s", "HTTP timeout", config.get("http_timeout_s", 30.0))
        if name == "web_fetch":
            private = QCheckBox("Allow private network addresses (localhost, 10.x, 192.168.x …)")
            private.setChecked(bool(config.get("allow_private_network", False)))
            self._fields["allow_private_network"] = private
            self.form.addRow("Network", private)
            main = QCheckBox("Keep only the page's main content (drop navigation, sidebars)")
            main.setChecked(bool(config.get("main_content", True)))
            self._fields["main_content"] = main
            self.form.addRow("Content", main)
            cross = QCheckBox("Follow redirects to other hosts (off: the AI is told the new URL)")
            cross.setChecked(bool(config.get("follow_cross_host_redirects", False)))
            self._fields["follow_cross_host_redirects"] = cross
            self.form.addRow("Redirects", cross)
        if name == "web_search":
            provider = QComboBox()
            provider.addItem("Automatic (Brave when a key is set, else DuckDuckGo)", "auto")
            provider.addItem("DuckDuckGo (no key)", "duckduckgo")
            provider.addItem("Brave Search API (key)", "brave")
            provider.setCurrentIndex(max(0, provider.findData(config.get("provider", "auto"))))
            self._fields["provider"] = provider
            self.form.addRow("Provider", provider)
            key = QLineEdit()
            key.setEchoMode(QLineEdit.EchoMode.Password)
            key.setPlaceholderText({"keyring": "stored in the OS keyring",
                                    "environment": "from BRAVE_SEARCH_API_KEY",
                                    "none": "Brave API key"}[secret_source(BRAVE_SEARCH_API_KEY)])
            self._fields["brave_key"] = key
            self.form.addRow("Brave API key", key)
        if name == "self_eval":
            checks = config.get("checks", {})
            for check in _SELF_EVAL_CHECKS:
                line = QLineEdit(checks.get(check, "") if isinstance(checks, dict) else "")
                line.setPlaceholderText("detected from the project" if check != "build"
                                        else "e.g. make build")
                self._fields[f"check:{check}"] = line
                self.form.addRow(check.replace("_", " ").capitalize(), line)
        if not self._fields:
            self._add_json_editor(config)

        self.error = QLabel()
        self.error.setObjectName("config-error")
        self.error.setStyleSheet("color: #cf222e;")
        self.error.setWordWrap(True)
        self.error.hide()
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save |
                                   QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._try_accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    # -- field builders --------------------------------------------------------------------

    def _add_dir_list(self, dirs: list[str]) -> None:
        self.dir_list = QListWidget()
        self.dir_list.addItems([str(d) for d in dirs])
        self.dir_list.setMaximumHeight(120)
        add, remove = QPushButton("Add folder…"), QPushButton("Remove")
        add.clicked.connect(self._pick_dir)
        remove.clicked.connect(lambda: [self.dir_list.takeItem(self.dir_list.row(i))
                                        for i in self.dir_list.selectedItems()])
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(remove)
        row.addStretch(1)
        box = QVBoxLayout()
        box.addWidget(self.dir_list)
        box.addLayout(row)
        hint = QLabel("Relative folders are inside the project. Nothing outside these folders "
                      "can be written, whatever the approval.")
        hint.setWordWrap(True)
        box.addWidget(hint)
        self.form.addRow("Write folders", box)
        self._fields["allowed_write_dirs"] = self.dir_list

    def _pick_dir(self) -> None:
        start = str(self.project_root) if self.project_root else ""
        chosen = QFileDialog.getExistingDirectory(self, "Allow writes in…", start)
        if chosen:
            self.add_write_dir(chosen)

    def add_write_dir(self, chosen: str) -> None:
        path = Path(chosen)
        if self.project_root is not None:
            try:
                chosen = str(path.resolve().relative_to(self.project_root)) or "."
            except ValueError:
                chosen = str(path)
        self.dir_list.addItem(chosen)

    def _add_seconds(self, key: str, label: str, value: float) -> None:
        spin = QDoubleSpinBox()
        spin.setRange(1, 3600)
        spin.setSuffix(" s")
        spin.setValue(float(value))
        self._fields[key] = spin
        self.form.addRow(label, spin)

    def _add_json_editor(self, config: dict[str, Any]) -> None:
        edit = QPlainTextEdit(json.dumps(config, indent=2))
        self._fields["json"] = edit
        self.form.addRow("Configuration (JSON)", edit)

    # -- result ----------------------------------------------------------------------------

    def config(self) -> dict[str, Any] | None:
        return self._result

    def _try_accept(self) -> None:
        try:
            self._result = self._collect()
        except ValueError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        if self._pending_secret is not None:
            try:
                set_secret(BRAVE_SEARCH_API_KEY, self._pending_secret)
            except SecretStoreError as exc:
                self.error.setText(str(exc))
                self.error.show()
                return
        self.accept()

    def _collect(self) -> dict[str, Any]:
        if "json" in self._fields:
            try:
                value = json.loads(self._fields["json"].toPlainText() or "{}")
            except json.JSONDecodeError as exc:
                raise ValueError(f"Configuration is not valid JSON: {exc}") from exc
            if not isinstance(value, dict):
                raise ValueError("Configuration must be a JSON object.")
            return value
        config = dict(self._original)
        for key, widget in self._fields.items():
            if key == "allowed_write_dirs":
                dirs = [widget.item(i).text().strip() for i in range(widget.count())]
                for d in dirs:
                    if d in _SYSTEM_DIRS or str(Path(d).expanduser()) in _SYSTEM_DIRS:
                        raise ValueError(f"{d} is a system folder; choose a project folder.")
                    if "\x00" in d or not d:
                        raise ValueError("A write folder is empty or invalid.")
                config[key] = dirs
            elif key == "allowed_commands":
                names = [line.strip() for line in widget.toPlainText().splitlines()
                         if line.strip()]
                for program in names:
                    if not _PROGRAM_NAME.match(program):
                        raise ValueError(f"{program!r} is not a program name: write just the "
                                         "name (git), without paths, arguments or spaces.")
                config[key] = sorted(set(names), key=names.index)
            elif key in ("shell_timeout_s", "http_timeout_s"):
                config[key] = widget.value()
            elif key in ("git_permission", "provider"):
                config[key] = widget.currentData()
            elif key in ("run_hooks", "allow_private_network", "main_content",
                         "follow_cross_host_redirects"):
                config[key] = widget.isChecked()
            elif key == "brave_key":
                if widget.text().strip():
                    self._pending_secret = widget.text().strip()
            elif key.startswith("check:"):
                checks = dict(config.get("checks") or {})
                text = widget.text().strip()
                if text:
                    checks[key.split(":", 1)[1]] = text
                else:
                    checks.pop(key.split(":", 1)[1], None)
                config["checks"] = checks
        return config
