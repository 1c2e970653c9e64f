"""Run → Clean Up Workspaces…: the run workspaces left behind (a crash while one was made, its
project gone, its conversation deleted), with Clean per workspace and for all. Listing reads
files and removing deletes folders: both off the GUI thread."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.ui.task_set import TaskSet

if TYPE_CHECKING:
    from app.core.worktrees.workspace import RunWorkspace, Worktrees


def stale_text(workspace: RunWorkspace) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(workspace.created_at)) \
        if workspace.created_at else "unknown time"
    why = ("never finished being made" if not workspace.ready else
           "its project is gone" if not workspace.source.is_dir() else
           "no conversation uses it")
    return f"{workspace.branch or workspace.id} — {when} — {why}"


class StaleWorkspacesDialog(QDialog):
    def __init__(self, worktrees: Worktrees, conversation_exists: Callable[[int], bool], *,
                 removed: Callable[[RunWorkspace], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("stale-workspaces")
        self.setWindowTitle("Workspaces left behind")
        self._worktrees = worktrees
        self._exists = conversation_exists
        self._removed = removed
        self.stale: list[RunWorkspace] = []
        self._tasks = TaskSet("clean up workspaces", lambda exc: self.status.setText(str(exc)))
        self.busy: asyncio.Future[object] | None = None
        self.list = QListWidget()
        self.status = QLabel("Looking…")
        self.clean_button = QPushButton("Clean")
        self.clean_button.setObjectName("stale-clean")
        self.clean_button.clicked.connect(self.clean_selected)
        self.clean_all_button = QPushButton("Clean all")
        self.clean_all_button.setObjectName("stale-clean-all")
        self.clean_all_button.clicked.connect(lambda: self._clean(list(self.stale)))
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.clean_button)
        buttons.addWidget(self.clean_all_button)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Run workspaces no conversation will use again. Clean deletes "
                                "the folder and its branch."))
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        self.resize(620, 320)
        self._start(self._look())

    def _start(self, coro: object) -> None:
        self.busy = self._tasks.run(coro)  # type: ignore[arg-type]
        self.clean_button.setEnabled(False)
        self.clean_all_button.setEnabled(False)

    async def _look(self) -> None:
        every = await asyncio.to_thread(self._worktrees.all)
        # The store is read here, on the GUI thread (one row by key each); the files off it.
        existing = {w.conversation_id for w in every
                    if w.conversation_id is not None and self._exists(w.conversation_id)}
        self.stale = await asyncio.to_thread(self._worktrees.stale, existing.__contains__)
        self.list.clear()
        for workspace in self.stale:
            self.list.addItem(QListWidgetItem(stale_text(workspace)))
        self.status.setText(f"{len(self.stale)} left behind" if self.stale
                            else "Nothing left behind.")
        self.clean_button.setEnabled(bool(self.stale))
        self.clean_all_button.setEnabled(bool(self.stale))

    def clean_selected(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.stale):
            self._clean([self.stale[row]])

    def _clean(self, workspaces: list[RunWorkspace]) -> None:
        async def clean() -> None:
            for workspace in workspaces:
                await self._worktrees.remove(workspace)
                self._removed(workspace)
            await self._look()
        self._start(clean())
