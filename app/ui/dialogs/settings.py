"""Settings: provider (key, model, base URL), permission rules, the sandbox, checkpoints,
about."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QStyledItemDelegate,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.agent.checkpointing import DEFAULT_MAX_FILE_BYTES
from app.core.checkpoints import CheckpointStore
from app.core.config import APP_NAME
from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import InvalidRuleError
from app.core.permissions.service import SubjectDecision
from app.core.secrets import ANTHROPIC_API_KEY, SecretStoreError, secret_source, set_secret
from app.core.services import (
    CHECKPOINT_MAX_FILE_KEY,
    CHECKPOINT_RETENTION_DAYS_KEY,
    CHECKPOINT_RETENTION_MB_KEY,
    CHECKPOINTS_ENABLED_KEY,
    DEFAULT_RETENTION_DAYS,
    DEFAULT_RETENTION_MB,
    Services,
)
from app.core.store.profiles import DEFAULT_MODEL
from app.core.visible_text import make_visible
from app.ui.dialogs.rule_editor import RuleEditorDialog
from app.ui.models.rules_model import RulesTableModel


class _DecisionDelegate(QStyledItemDelegate):
    def createEditor(self, parent, option, index):
        combo = QComboBox(parent)
        combo.addItems(["allow", "ask", "deny"])
        return combo

    def setEditorData(self, editor, index):
        editor.setCurrentText(str(index.data(Qt.ItemDataRole.EditRole)))

    def setModelData(self, editor, model, index):
        model.setData(index, editor.currentText(), Qt.ItemDataRole.EditRole)


class RulesTab(QWidget):
    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.services = services
        self.model = RulesTableModel(services.permissions.rules, self)
        self.table = QTableView()
        self.table.setObjectName("rules-table")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked |
                                   QAbstractItemView.EditTrigger.EditKeyPressed |
                                   QAbstractItemView.EditTrigger.SelectedClicked)
        self.table.setItemDelegateForColumn(RulesTableModel.COL_DECISION,
                                            _DecisionDelegate(self.table))
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(RulesTableModel.COL_DESCRIPTION, QHeaderView.ResizeMode.Stretch)
        self.table.setAlternatingRowColors(True)

        self.add_button = QPushButton("Add rule…")
        self.delete_button = QPushButton("Delete")
        self.delete_button.setShortcut(QKeySequence.StandardKey.Delete)
        self.import_button = QPushButton("Import…")
        self.export_button = QPushButton("Export…")
        toolbar = QHBoxLayout()
        for button in (self.add_button, self.delete_button):
            toolbar.addWidget(button)
        toolbar.addStretch(1)
        toolbar.addWidget(self.import_button)
        toolbar.addWidget(self.export_button)

        self.status = QLabel("Changes take effect immediately.")
        self.status.setObjectName("rules-status")
        self.model.edit_failed.connect(self._show_error)

        layout = QVBoxLayout(self)
        layout.addLayout(toolbar)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        layout.addWidget(self._build_tester())

        self.add_button.clicked.connect(self.add_rule)
        self.delete_button.clicked.connect(self.delete_selected)
        self.import_button.clicked.connect(self.import_rules)
        self.export_button.clicked.connect(self.export_rules)

    # -- test a call ---------------------------------------------------------------------

    def _build_tester(self) -> QGroupBox:
        box = QGroupBox("Test a call")
        form = QFormLayout(box)
        self.test_server = QLineEdit("builtin")
        self.test_tool = QComboBox()
        self.test_tool.setEditable(True)
        self.test_tool.addItems(sorted(self.services.registry.names()))
        self.test_input = QPlainTextEdit('{"command": "git status && rm -rf build"}')
        self.test_input.setMaximumHeight(70)
        self.test_button = QPushButton("Decide")
        self.test_result = QLabel()
        self.test_result.setObjectName("test-result")
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row = QHBoxLayout()
        row.addWidget(self.test_server)
        row.addWidget(self.test_tool, 1)
        row.addWidget(self.test_button)
        form.addRow("Server / tool", row)
        form.addRow("Input JSON", self.test_input)
        form.addRow("Result", self.test_result)
        self.test_button.clicked.connect(self.run_test)
        self._test_generation = 0
        self._test_task: asyncio.Future[None] | None = None
        self.test_input.textChanged.connect(self._test_input_changed)
        self.test_server.textChanged.connect(self._test_input_changed)
        self.test_tool.currentTextChanged.connect(self._test_input_changed)
        if "shell_exec" in self.services.registry.names():
            self.test_tool.setCurrentText("shell_exec")
        return box

    def run_test(self) -> None:
        """Decide the call in a worker thread: subjects come from parsers (tree-sitter for
        shell) that must not run on the GUI thread; the answer is shown when it arrives."""
        self._test_generation += 1
        generation = self._test_generation
        call = (self.test_server.text().strip(), self.test_tool.currentText().strip(),
                self.test_input.toPlainText())
        self.test_result.setText("Deciding…")
        self._test_task = asyncio.ensure_future(self._decide_in_worker(generation, *call))

    def _test_input_changed(self) -> None:
        """A result still on its way (or shown) is for the old input: drop it."""
        self._test_generation += 1
        if self.test_result.text():
            self.test_result.setText("")

    async def _decide_in_worker(self, generation: int, server: str, tool: str,
                                text: str) -> None:
        try:
            html, rule_id = await asyncio.to_thread(_explain_call, self.services, server, tool,
                                                    text)
        except Exception as exc:  # say what went wrong rather than leave "Deciding…"
            html, rule_id = f"Could not decide: {_escape(make_visible(str(exc)))}", None
        if generation != self._test_generation:
            return  # the input changed while deciding: this answer is about another call
        self.test_result.setText(html)
        if rule_id is not None:
            row = self.model.row_of(rule_id)
            if row >= 0:
                self.table.selectRow(row)

    # -- editing -----------------------------------------------------------------------------

    def add_rule(self) -> None:
        dialog = RuleEditorDialog(self.services.registry.names(), self)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)

        def done(code: int) -> None:
            rule = dialog.rule()
            if code == QDialog.DialogCode.Accepted and rule is not None:
                try:
                    row = self.model.add_rule(rule)
                except InvalidRuleError as exc:
                    self._show_error(str(exc))
                    return
                self.table.selectRow(row)
                self.status.setText("Rule added; it applies to the next call.")
            dialog.deleteLater()

        dialog.finished.connect(done)
        dialog.open()

    def delete_selected(self) -> None:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        if not rows:
            return
        summaries = "\n".join(self.model.rule_at(r).summary() for r in rows[:5])
        box = QMessageBox(QMessageBox.Icon.Warning, "Delete rules",
                          f"Delete {len(rows)} rule(s)?\n\n{summaries}",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)

        def done(_code: int) -> None:
            if box.clickedButton() is box.button(QMessageBox.StandardButton.Yes):
                self.model.delete_rows(rows)
                self.status.setText(f"Deleted {len(rows)} rule(s).")
            box.deleteLater()

        box.finished.connect(done)
        box.open()

    def import_rules(self, path: str | None = None) -> None:
        if not path:
            path, _ = QFileDialog.getOpenFileName(self, "Import rules", "", "JSON (*.json)")
        if not path:
            return
        try:
            rules = RuleRepository.parse_json(Path(path).read_text(encoding="utf-8"))
        except (OSError, InvalidRuleError) as exc:
            self._show_error(f"Not imported: {exc}")
            return
        self.services.permissions.rules.replace_all(rules)
        self.model.reload()
        self.status.setText(f"Imported {len(rules)} rules from {path}.")

    def export_rules(self, path: str | None = None) -> None:
        if not path:
            path, _ = QFileDialog.getSaveFileName(self, "Export rules", "tebiki-rules.json",
                                                  "JSON (*.json)")
        if not path:
            return
        Path(path).write_text(self.services.permissions.rules.export_json(), encoding="utf-8")
        self.status.setText(f"Exported to {path}.")

    def _show_error(self, message: str) -> None:
        self.status.setText(f"<span style='color:#cf222e'>{_escape(message)}</span>")


class ProviderTab(QWidget):
    def __init__(self, services: Services, profile_id: int, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.profile_id = profile_id
        profile = services.profiles.get(profile_id)
        form = QFormLayout(self)
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        source = secret_source(ANTHROPIC_API_KEY)
        self.api_key.setPlaceholderText({"keyring": "stored in the OS keyring",
                                         "environment": "from ANTHROPIC_API_KEY",
                                         "none": "sk-ant-…"}[source])
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.addItems(sorted({profile.model, DEFAULT_MODEL}))
        self.model.setCurrentText(profile.model)
        self.base_url = QLineEdit(profile.base_url or "")
        self.base_url.setPlaceholderText("https://api.anthropic.com (default)")
        self.status = QLabel()
        self.status.setObjectName("provider-status")
        self.status.setWordWrap(True)
        self.test_button = QPushButton("Test connection")
        form.addRow("API key", self.api_key)
        form.addRow("Model", self.model)
        form.addRow("Base URL", self.base_url)
        form.addRow("", self.test_button)
        form.addRow("", self.status)
        self._test_task: asyncio.Future[None] | None = None
        self.test_button.clicked.connect(self.start_connection_test)

    def start_connection_test(self) -> None:
        self.test_button.setEnabled(False)
        self.status.setText("Connecting…")
        self._test_task = asyncio.ensure_future(self.test_connection())

    async def test_connection(self) -> None:
        """List the models with the values in the form (not yet saved); report what happened."""
        from dataclasses import replace

        from app.core.agent.providers import ProviderError, create_provider

        profile = replace(self.services.profiles.get(self.profile_id),
                          base_url=self.base_url.text().strip() or None)
        try:
            provider = await asyncio.to_thread(
                create_provider, profile, api_key=self.api_key.text().strip() or None,
                max_retries=0)
            try:
                models = await provider.list_models()
            finally:
                await provider.aclose()
        except ProviderError as exc:
            self.status.setText(f"<span style='color:#cf222e'>{_escape(exc.message)}</span>")
        except Exception as exc:  # network errors and the like: say what, not crash
            self.status.setText(f"<span style='color:#cf222e'>{_escape(str(exc))}</span>")
        else:
            current = self.model.currentText()
            self.model.clear()
            self.model.addItems(models)
            self.model.setCurrentText(current)
            self.status.setText(f"Connected: {len(models)} models available.")
        finally:
            self.test_button.setEnabled(True)

    def save(self) -> bool:
        key = self.api_key.text().strip()
        if key:
            try:
                set_secret(ANTHROPIC_API_KEY, key)
            except SecretStoreError as exc:
                self.status.setText(str(exc))
                return False
        profile = self.services.profiles.get(self.profile_id)
        from dataclasses import replace

        self.services.profiles.update(replace(
            profile, model=self.model.currentText().strip() or DEFAULT_MODEL,
            base_url=self.base_url.text().strip() or None))
        return True


class SandboxGroup(QGroupBox):
    """The OS sandbox: what the probe found, and whether programs must run in it."""

    HELP = ("Refuse to run programs when the sandbox is not available, instead of running them "
            "unsandboxed.")

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__("Sandbox", parent)
        self.setObjectName("sandbox-group")
        self.services = services
        status = services.sandbox.status
        self.status = QLabel()
        self.status.setObjectName("sandbox-status")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if status.available:
            where = f" at {status.executable}" if status.executable else ""
            self.status.setText(f"✓ Sandboxed ({status.backend}{where}): the tools marked "
                                "\"sandboxed\" in the tools list run their programs in it.")
            self.status.setStyleSheet("QLabel { color: #1a7f37; }")
        else:
            self.status.setText(f"⚠ {status.summary[:1].upper()}{status.summary[1:]}"
                                .rstrip(".") + ".")
            self.status.setStyleSheet("QLabel { background: #fff1e5; color: #762c00; border: "
                                      "1px solid #fb8f44; border-radius: 6px; padding: 6px; }")
        self.required = QCheckBox("Require the sandbox")
        self.required.setObjectName("sandbox-required")
        self.required.setChecked(services.sandbox.required)
        hint = QLabel(self.HELP)
        hint.setObjectName("sandbox-required-help")
        hint.setWordWrap(True)
        hint.setStyleSheet("QLabel { color: palette(placeholder-text); }")
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addSpacing(6)
        layout.addWidget(self.required)
        layout.addWidget(hint)

    def save(self) -> None:
        """Saved only when changed: an untouched box keeps following the default (on where
        the sandbox works), e.g. after bubblewrap is installed."""
        if self.required.isChecked() != self.services.sandbox.required:
            self.services.set_sandbox_required(self.required.isChecked())


_MB = 1024 * 1024


def checkpoint_usage(data_dir: Path) -> list[tuple[str, Path, int]]:
    """(project folder, shadow folder, bytes) per project with checkpoints; blocking (walks
    the folders), so it runs in a worker thread. Largest first."""
    out: list[tuple[str, Path, int]] = []
    base = data_dir / "checkpoints"
    with contextlib.suppress(OSError):
        for shadow in base.iterdir():
            marker = shadow / "project"
            if not shadow.is_dir() or not marker.is_file():
                continue
            try:
                project = marker.read_text(errors="surrogateescape").strip()
            except OSError:
                continue
            total = 0
            for folder, _dirs, files in os.walk(shadow):
                for name in files:
                    with contextlib.suppress(OSError):
                        total += os.lstat(os.path.join(folder, name)).st_size
            out.append((project, shadow, total))
    return sorted(out, key=lambda row: (-row[2], row[0]))


def delete_checkpoints(data_dir: Path, project: str, shadow: Path) -> None:
    """Forget every checkpoint of ``project`` (blocking: a worker thread's job)."""
    store = CheckpointStore(data_dir, Path(project))
    if store.shadow_dir == shadow:
        store.delete_all()  # under the store's lock: never in the middle of a snapshot
    else:  # the folder moved since: its shadow is no longer reachable from its path
        shutil.rmtree(shadow, ignore_errors=True)
    with contextlib.suppress(OSError):
        (shadow.parent / f"{shadow.name}.lock").unlink()


def _human_size(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"


class CheckpointsTab(QWidget):
    """Checkpoints: on/off, the size cap per file, retention, and the space used per project."""

    NOTE = ("A checkpoint records the project folder before and after each tool call that can "
            "change files, so you can undo the call. It does not cover files your .gitignore "
            "excludes, built-in excludes (.venv, node_modules, build, …), files over the size "
            "cap, or nested repositories.")

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("checkpoints-tab")
        self.services = services
        settings = services.settings
        self.enabled = QCheckBox("Take checkpoints around tool calls that can change files "
                                 "(undo / redo)")
        self.enabled.setObjectName("checkpoints-enabled")
        self.enabled.setChecked(settings.get(CHECKPOINTS_ENABLED_KEY, True) is not False)
        max_file = settings.get(CHECKPOINT_MAX_FILE_KEY, DEFAULT_MAX_FILE_BYTES)
        if not isinstance(max_file, int) or isinstance(max_file, bool) or max_file <= 0:
            max_file = DEFAULT_MAX_FILE_BYTES
        self.max_file_mb = QSpinBox()
        self.max_file_mb.setObjectName("checkpoints-max-file")
        self.max_file_mb.setRange(1, 4096)
        self.max_file_mb.setSuffix(" MB")
        self.max_file_mb.setValue(max(1, round(max_file / _MB)))
        self.retention_days = QSpinBox()
        self.retention_days.setObjectName("checkpoints-retention-days")
        self.retention_days.setRange(0, 3650)
        self.retention_days.setSuffix(" days")
        self.retention_days.setSpecialValueText("no limit")
        self.retention_days.setValue(_int_setting(
            settings.get(CHECKPOINT_RETENTION_DAYS_KEY, DEFAULT_RETENTION_DAYS),
            DEFAULT_RETENTION_DAYS))
        self.retention_mb = QSpinBox()
        self.retention_mb.setObjectName("checkpoints-retention-mb")
        self.retention_mb.setRange(0, 1_000_000)
        self.retention_mb.setSingleStep(256)
        self.retention_mb.setSuffix(" MB per project")
        self.retention_mb.setSpecialValueText("no limit")
        self.retention_mb.setValue(_int_setting(
            settings.get(CHECKPOINT_RETENTION_MB_KEY, DEFAULT_RETENTION_MB),
            DEFAULT_RETENTION_MB))
        form = QFormLayout()
        form.addRow("", self.enabled)
        form.addRow("Size cap per file", self.max_file_mb)
        form.addRow("Keep checkpoints for", self.retention_days)
        form.addRow("… and at most", self.retention_mb)
        note = QLabel(self.NOTE)
        note.setObjectName("checkpoints-note")
        note.setWordWrap(True)
        note.setStyleSheet("QLabel { color: palette(placeholder-text); }")
        pruning = QLabel("Older checkpoints are pruned in the background when a project opens "
                         "and after a run.")
        pruning.setWordWrap(True)
        pruning.setStyleSheet("QLabel { color: palette(placeholder-text); }")

        usage_box = QGroupBox("Space used")
        self.usage = QTableWidget(0, 3)
        self.usage.setObjectName("checkpoints-usage")
        self.usage.setHorizontalHeaderLabels(["Project", "Space", ""])
        self.usage.verticalHeader().hide()
        self.usage.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.usage.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.usage.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.usage_status = QLabel("")
        self.usage_status.setObjectName("checkpoints-usage-status")
        self.usage_status.setWordWrap(True)
        self.refresh_button = QPushButton("Refresh")
        self.delete_current_button = QPushButton("Delete checkpoints of this project")
        self.delete_current_button.setObjectName("checkpoints-delete-current")
        self.delete_current_button.setEnabled(False)
        bar = QHBoxLayout()
        bar.addWidget(self.usage_status, 1)
        bar.addWidget(self.refresh_button)
        bar.addWidget(self.delete_current_button)
        usage_layout = QVBoxLayout(usage_box)
        usage_layout.addWidget(self.usage, 1)
        usage_layout.addLayout(bar)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(pruning)
        layout.addWidget(usage_box, 1)
        layout.addWidget(note)
        self.rows: list[tuple[str, Path, int]] = []
        self._task: asyncio.Future[None] | None = None
        self.refresh_button.clicked.connect(lambda: self.refresh_usage())
        self.delete_current_button.clicked.connect(self._delete_current)
        self.refresh_usage()

    @property
    def current_project(self) -> Path | None:
        return self.services.permissions.working_dir

    def refresh_usage(self) -> asyncio.Future[None] | None:
        """Scan the checkpoint folders in a worker thread; the table fills in when done."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.usage_status.setText("")
            return None
        self.usage_status.setText("Measuring…")
        self._task = asyncio.ensure_future(self._load_usage())
        return self._task

    async def _load_usage(self) -> None:
        try:
            rows = await asyncio.to_thread(checkpoint_usage, self.services.data_dir)
        except Exception as exc:  # say what, never crash the dialog
            self.usage_status.setText(f"Could not measure: {_escape(str(exc))}")
            return
        self._show_rows(rows)

    def _show_rows(self, rows: list[tuple[str, Path, int]]) -> None:
        self.rows = rows
        current = str(self.current_project) if self.current_project is not None else None
        self.usage.setRowCount(len(rows))
        for row, (project, _shadow, size) in enumerate(rows):
            name = QTableWidgetItem(project + ("  (open now)" if project == current else ""))
            name.setToolTip(project)
            if project == current:
                font = name.font()
                font.setBold(True)
                name.setFont(font)
            self.usage.setItem(row, 0, name)
            amount = QTableWidgetItem(_human_size(size))
            amount.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.usage.setItem(row, 1, amount)
            button = QPushButton("Delete")
            button.setToolTip(f"Delete the checkpoints of {project}")
            button.clicked.connect(lambda _=False, p=project: self.confirm_delete(p))
            self.usage.setCellWidget(row, 2, button)
        total = sum(size for _p, _s, size in rows)
        self.usage_status.setText(
            f"{len(rows)} project{'s' if len(rows) != 1 else ''}, {_human_size(total)} in all."
            if rows else "No checkpoints yet.")
        self.delete_current_button.setEnabled(any(p == current for p, _s, _n in rows))

    def _delete_current(self) -> None:
        if self.current_project is not None:
            self.confirm_delete(str(self.current_project))

    def confirm_delete(self, project: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, "Delete checkpoints",
                          f"Delete every checkpoint of {project}?\n\nUndo and redo of its "
                          "earlier tool calls will no longer be possible.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                          self)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)

        def done(_code: int) -> None:
            if box.clickedButton() is box.button(QMessageBox.StandardButton.Yes):
                self.delete_project(project)
            box.deleteLater()

        box.finished.connect(done)
        box.open()

    def delete_project(self, project: str) -> asyncio.Future[None]:
        """Delete ``project``'s checkpoints in a worker thread, then measure again."""
        self._task = asyncio.ensure_future(self._delete(project))
        return self._task

    async def _delete(self, project: str) -> None:
        shadows = [shadow for p, shadow, _n in self.rows if p == project]
        self.usage_status.setText(f"Deleting the checkpoints of {project}…")
        try:
            for shadow in shadows:
                await asyncio.to_thread(delete_checkpoints, self.services.data_dir, project,
                                        shadow)
        except Exception as exc:
            self.usage_status.setText(f"Could not delete: {_escape(str(exc))}")
            return
        await self._load_usage()

    def save(self) -> None:
        settings = self.services.settings
        settings.set(CHECKPOINTS_ENABLED_KEY, self.enabled.isChecked())
        settings.set(CHECKPOINT_MAX_FILE_KEY, self.max_file_mb.value() * _MB)
        settings.set(CHECKPOINT_RETENTION_DAYS_KEY, self.retention_days.value())
        settings.set(CHECKPOINT_RETENTION_MB_KEY, self.retention_mb.value())


def _int_setting(value: object, default: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return max(0, int(value))


class SettingsDialog(QDialog):
    def __init__(self, services: Services, profile_id: int, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(f"{APP_NAME} Settings")
        self.resize(900, 640)
        self.tabs = QTabWidget()
        self.provider_tab = ProviderTab(services, profile_id)
        self.rules_tab = RulesTab(services)
        self.tabs.addTab(self.provider_tab, "Provider")
        self.tabs.addTab(self.rules_tab, "Permission rules")
        self.sandbox_group = SandboxGroup(services)
        sandbox_tab = QWidget()
        sandbox_layout = QVBoxLayout(sandbox_tab)
        sandbox_layout.addWidget(self.sandbox_group)
        sandbox_layout.addStretch(1)
        self.tabs.addTab(sandbox_tab, "Sandbox")
        self.checkpoints_tab = CheckpointsTab(services)
        self.tabs.addTab(self.checkpoints_tab, "Checkpoints")
        if services.mcp is not None and services.mcp_config is not None:
            from app.ui.dialogs.mcp_settings import McpServersTab

            self.mcp_tab = McpServersTab(services.mcp_config, services.mcp)
            self.tabs.addTab(self.mcp_tab, "MCP servers")
        about = QLabel(f"<h3>{APP_NAME}</h3><p>A desktop AI agent workbench. Every tool call "
                       "passes your permission rules.</p><p>Data folder: "
                       f"<code>{services.data_dir}</code></p>")
        about.setWordWrap(True)
        about.setAlignment(Qt.AlignmentFlag.AlignTop)
        about.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tabs.addTab(about, "About")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save |
                                   QDialogButtonBox.StandardButton.Close)
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(buttons)

    def _save(self) -> None:
        self.sandbox_group.save()
        self.checkpoints_tab.save()
        if self.provider_tab.save():
            self.accept()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _explain_call(services: Services, server: str, tool: str,
                  text: str) -> tuple[str, int | None]:
    """(HTML explaining the decision, id of the deciding rule); runs in a worker thread.

    Lists the canonical subjects the rules are matched against (each shell command, resolved
    path or canonical host), each with its own decision and the rule that made it.
    """
    try:
        tool_input = json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        return f"Input is not valid JSON: {_escape(str(exc))}", None
    permissions = services.permissions
    decision = permissions.decide(server, tool, tool_input)
    lines = [f"<b>{decision.kind.upper()}</b> — {_escape(make_visible(decision.explain()))}"]
    parts = list(decision.subjects)
    if not parts:
        # The deciding rule applies whatever the input; still show what rules would see.
        parts = [SubjectDecision(subject, decision.kind, decision.rule)
                 for subject in _subjects_of(services, server, tool, tool_input)]
    if parts:
        lines.append("Matched against:")
    for part in parts:
        why = part.rule.summary() if part.rule else "no rule matched"
        lines.append(f"&nbsp;&nbsp;• <code>{_escape(make_visible(part.subject))}</code> → "
                     f"{part.kind} ({_escape(make_visible(why))})")
    rule_id = decision.rule.id if decision.rule is not None else None
    return "<br>".join(lines), rule_id


def _subjects_of(services: Services, server: str, tool: str, tool_input: object) -> list[str]:
    found = services.registry.get(tool)
    if found is None or found.spec.server_id != server or not isinstance(tool_input, dict):
        return []
    try:
        return [s for s in found.spec.subjects(tool_input, services.permissions.working_dir)
                if isinstance(s, str)]
    except Exception as exc:  # SubjectError keeps what it could read
        return [s for s in getattr(exc, "partial", ()) if isinstance(s, str)]
