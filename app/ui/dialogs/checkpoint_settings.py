"""Settings → Checkpoints: on/off, the size cap, retention, the space each project uses and
deleting checkpoints (the folder scans and deletes run in a worker thread)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.checkpoints import CheckpointStore
from app.core.services import Services
from app.core.settings_fields import (
    CHECKPOINT_MAX_FILE,
    CHECKPOINT_RETENTION_DAYS,
    CHECKPOINT_RETENTION_MB,
    CHECKPOINTS_ENABLED,
)
from app.ui.dialogs.setting_form import SettingsForm
from app.ui.markup import escape

_W = TypeVar("_W", bound=QWidget)


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
        form = self.form = SettingsForm(services.settings, (
            CHECKPOINTS_ENABLED, CHECKPOINT_MAX_FILE, CHECKPOINT_RETENTION_DAYS,
            CHECKPOINT_RETENTION_MB))
        self.enabled = _named(form.input(CHECKPOINTS_ENABLED), QCheckBox, "checkpoints-enabled")
        self.max_file_mb = _named(form.input(CHECKPOINT_MAX_FILE), QSpinBox,
                                  "checkpoints-max-file")
        self.retention_days = _named(form.input(CHECKPOINT_RETENTION_DAYS), QSpinBox,
                                     "checkpoints-retention-days")
        self.retention_mb = _named(form.input(CHECKPOINT_RETENTION_MB), QSpinBox,
                                   "checkpoints-retention-mb")
        self.retention_mb.setSingleStep(256)
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
        return self.services.permissions.project_root

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
            self.usage_status.setText(f"Could not measure: {escape(str(exc))}")
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
            self.usage_status.setText(f"Could not delete: {escape(str(exc))}")
            return
        await self._load_usage()

    def save(self) -> bool:
        """Store the settings; False (the reason shown) while one is not valid."""
        return self.form.save()


def _named(widget: QWidget, kind: type[_W], name: str) -> _W:
    assert isinstance(widget, kind), f"{name} is a {type(widget).__name__}"
    widget.setObjectName(name)
    return widget
