"""Review changes: what a worktree run changed against the commit it started from, per file with
its diff, and bringing it back into the project — Apply or Discard per file and for all.

A file the person also changed in the project since the run started is a conflict: Apply then
opens the restore merge UI (app.ui.dialogs.apply_conflicts): keep mine, take the run's, or a
three-way merge the person can edit; what they chose is what is written. Every apply goes
through the project's checkpoints (app.core.worktrees.apply) and is kept in the conversation's
history (app.ui.worktree_applies), so the conversation's Undo takes it back, and **Undo apply**
here is that same undo of the last one. **Finish** removes the workspace, or first keeps its
branch in the project when asked. Git and the files are read and written off the GUI thread.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.ui.task_set import TaskSet
from app.ui.tones import Tone, tone

if TYPE_CHECKING:
    from app.core.agent.checkpointing import CallChanges
    from app.core.worktrees.apply import ApplyItem, Resolution
    from app.core.worktrees.workspace import RunWorkspace, Worktrees
    from app.ui.worktree_applies import ProjectApplies

MAX_DIFF_LINES = 5000


def diff_text(item: ApplyItem) -> str:
    """The unified diff of the run's version against the one it started from."""
    try:
        old = (item.base or b"").decode("utf-8").splitlines(keepends=True)
        new = (item.theirs or b"").decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return "(a binary file)"
    lines = list(difflib.unified_diff(old, new, f"a/{item.path}", f"b/{item.path}"))
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"\n… {len(lines) - MAX_DIFF_LINES} more lines\n"]
    return "".join(lines)


def row_text(item: ApplyItem, state: str) -> str:
    kind = "added" if item.base is None else "deleted" if item.theirs is None else "modified"
    text = f"{item.path}  ({kind})"
    if item.conflict:
        text += " — changed in the project too"
    return text + (f" — {state}" if state else "")


class ReviewChangesDialog(QDialog):
    """``finished(workspace)``: Finish removed it."""

    def __init__(self, workspace: RunWorkspace, worktrees: Worktrees,
                 project: ProjectApplies, *,
                 finished: Callable[[RunWorkspace], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("review-changes")
        self.setWindowTitle(f"Review changes — {workspace.branch}")
        self._workspace = workspace
        self._worktrees = worktrees
        self._project = project
        self._finished = finished
        self.items: list[ApplyItem] = []
        self.states: dict[str, str] = {}  # path → "applied" / "kept yours" / "discarded"
        self.applied: list[tuple[list[str], CallChanges]] = []  # for Undo, newest last
        self._tasks = TaskSet("review changes", lambda exc: self.status.setText(str(exc)))
        self.busy: asyncio.Future[object] | None = None
        self.heading = QLabel(f"The run's changes against {workspace.base[:10]}, the commit "
                              f"it started from, to bring into {workspace.source}")
        self.heading.setWordWrap(True)
        self.files = QListWidget()
        self.files.setObjectName("review-files")
        self.files.currentRowChanged.connect(self._show_diff)
        self.diff = QPlainTextEdit()
        self.diff.setReadOnly(True)
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff.setObjectName("review-diff")
        self.diff.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.files)
        split.addWidget(self.diff)
        split.setSizes([320, 560])
        self.apply_button = self._button("Apply", lambda: self.apply(self._selected()))
        self.discard_button = self._button("Discard", lambda: self.discard(self._selected()))
        self.apply_all_button = self._button("Apply all", lambda: self.apply(self._pending()))
        self.discard_all_button = self._button("Discard all",
                                               lambda: self.discard(self._pending()))
        self.undo_button = self._button("Undo apply", self.undo)
        self.keep_branch = QCheckBox("Keep the branch in the project")
        self.finish_button = self._button("Finish", self.finish)
        self.finish_button.setToolTip("Remove the workspace (what was not applied is lost)")
        self.status = QLabel("Reading the changes…")
        self.status.setWordWrap(True)
        per_file = QHBoxLayout()
        for widget in (QLabel("This file:"), self.apply_button, self.discard_button):
            per_file.addWidget(widget)
        per_file.addStretch(1)
        for widget in (self.apply_all_button, self.discard_all_button, self.undo_button):
            per_file.addWidget(widget)
        end = QHBoxLayout()
        end.addWidget(self.status, 1)
        end.addWidget(self.keep_branch)
        end.addWidget(self.finish_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(split, 1)
        layout.addLayout(per_file)
        layout.addLayout(end)
        self.resize(980, 560)
        self._sync()
        self._run(self._load())

    def _button(self, text: str, slot: Callable[[], object]) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName("review-" + text.lower().replace(" ", "-"))
        button.clicked.connect(lambda: slot())
        return button

    def _run(self, coro: object) -> None:
        self.busy = self._tasks.run(coro)  # type: ignore[arg-type]
        self._sync()
        self.busy.add_done_callback(lambda _f: self._sync())

    async def _load(self) -> None:
        from app.core.worktrees.apply import plan_apply
        from app.core.worktrees.review import run_changes

        changes = await run_changes(self._worktrees, self._workspace)
        self.items = await plan_apply(self._workspace, self._workspace.source, changes)
        self.status.setText(f"{len(self.items)} changed file(s)" if self.items
                            else "The run changed no file.")
        self._fill()
        if self.items:
            self.files.setCurrentRow(0)

    def _fill(self) -> None:
        current = self.files.currentRow()
        self.files.clear()
        for item in self.items:
            row = QListWidgetItem(row_text(item, self.states.get(item.path, "")))
            if item.conflict:
                row.setForeground(tone(Tone.DANGER).text)
            self.files.addItem(row)
        if 0 <= current < self.files.count():
            self.files.setCurrentRow(current)

    def _selected(self) -> list[ApplyItem]:
        row = self.files.currentRow()
        return [self.items[row]] if 0 <= row < len(self.items) else []

    def _pending(self) -> list[ApplyItem]:
        return [i for i in self.items if i.path not in self.states]

    def _show_diff(self, row: int) -> None:
        if 0 <= row < len(self.items):
            self.diff.setPlainText(diff_text(self.items[row]))
        self._sync()

    def _sync(self) -> None:
        idle = self.busy is None or self.busy.done()
        selected = self._selected()
        open_one = bool(selected) and selected[0].path not in self.states
        self.apply_button.setEnabled(idle and open_one)
        self.discard_button.setEnabled(idle and open_one)
        self.apply_all_button.setEnabled(idle and bool(self._pending()))
        self.discard_all_button.setEnabled(idle and bool(self._pending()))
        self.undo_button.setEnabled(idle and bool(self.applied))
        self.finish_button.setEnabled(idle)

    # -- the actions -----------------------------------------------------------------------

    def apply(self, items: list[ApplyItem]) -> None:
        """Write ``items`` into the project; the ones that changed there meanwhile as the
        person chooses in the restore merge UI (Cancel writes nothing)."""
        self._run(self._apply(items))

    async def _apply(self, items: list[ApplyItem]) -> None:
        from app.core.worktrees.apply import apply, written
        from app.core.worktrees.apply_record import apply_id

        resolutions: dict[str, Resolution] = {}
        merged: dict[str, bytes] = {}
        if any(i.conflict for i in items):
            from app.ui.dialogs.apply_conflicts import answers, preview

            dialog = preview(items, f"Apply {len(items)} file(s) from "
                             f"{self._workspace.branch}", self)
            if not await self._project.ask(dialog):
                self.status.setText("Apply cancelled: nothing was written.")
                return
            resolutions, merged = answers(dialog)
        paths = written(items, resolutions)
        changes = await apply(self._workspace.source, items, resolutions,
                              self._project.checkpointer(self._workspace), apply_id(), merged)
        for item in items:
            self.states[item.path] = "applied" if item.path in paths else "kept yours"
        if changes is not None and changes.changes:
            self.applied.append(([i.path for i in items], changes))
            await self._project.recorded(self._workspace, paths, changes)
        self.status.setText(f"Applied {len(paths)} file(s) into the project.")
        self._fill()

    def discard(self, items: list[ApplyItem]) -> None:
        for item in items:
            self.states[item.path] = "discarded"
        self.status.setText(f"Discarded {len(items)} file(s): they stay only in the run.")
        self._fill()
        self._sync()

    def undo(self) -> None:
        self._run(self._undo())

    async def _undo(self) -> None:
        if not self.applied:
            return
        paths, changes = self.applied[-1]
        if not await self._project.undo(self._workspace, changes):
            self.status.setText("The apply was not undone.")
            return
        self.applied.pop()
        for path in paths:
            self.states.pop(path, None)
        self.status.setText(f"Undid the apply of {len(paths)} file(s).")
        self._fill()

    def finish(self) -> None:
        self._run(self._finish())

    async def _finish(self) -> None:
        keep = self.keep_branch.isChecked()
        await self._worktrees.remove(self._workspace, keep_branch=keep)
        self._finished(self._workspace)
        self.status.setText("The workspace is removed" +
                            (f"; the branch {self._workspace.branch} is kept." if keep else "."))
        self.accept()
