"""Undo, redo and restore of the agent's file changes, in one place: plan → preview dialog →
apply → checkpoint, for a call's card, a run and "restore to before this message"; plus the
diff viewer and the background pruning of old checkpoints.

The checkpoint engine blocks (git runs as child processes); ``Checkpointer`` already runs it in
a worker thread, and whatever else touches the disk here (reading blobs to merge, writing a
merged file, pruning) goes through ``asyncio.to_thread`` too, so the GUI never waits for git.
One restore runs at a time; a failure is reported through ``message`` (and a message box), never
raised into Qt.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QDialog, QWidget

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    # The checkpoint engine (~20 ms of imports) loads with the first checkpointer
    # (Services.checkpointer_for), after ready: the panel is ready without it.
    from app.core.agent.checkpointing import CallChanges, Checkpointer, UndoRecord
    from app.core.checkpoints import MergeResult, PlannedAction
    from app.core.services import Services

    # Imported by the first preview or diff (or before it, off the GUI thread, by the warm-up of
    # app.ui.deferred_imports.DEFERRED_UI_MODULES): the panels are ready without them.
    from app.ui.dialogs.restore_preview import DiffDialog, RestorePreviewDialog

log = logging.getLogger(__name__)

PRUNE_INTERVAL_S = 3600.0  # at most one background prune per project per hour
_GIT_COMMIT = re.compile(r"\bgit\b(?:\s+-{1,2}\S+(?:\s+\S+)?)*?\s+commit\b")


def made_a_commit(tool_name: str, tool_input: Any) -> bool:
    """True when a call committed to the project's repository (git_ops commit, or a shell
    command with ``git commit``): undoing it restores the files, not the history."""
    if not isinstance(tool_input, dict):
        return False
    if tool_name == "git_ops":
        return tool_input.get("action") == "commit"
    if tool_name == "shell_exec":
        return bool(_GIT_COMMIT.search(str(tool_input)))
    return False


class CheckpointController(QObject):
    """The async logic behind every undo/redo/restore button (see the module docstring)."""

    # The preview or diff dialog just opened (tests answer it; the person sees it).
    dialog_shown = Signal(QDialog)
    busy_changed = Signal(bool)
    message = Signal(str)  # what happened, for the status bar

    def __init__(self, services: Services, parent: QWidget) -> None:
        super().__init__(parent)
        self.services = services
        self._window = parent
        self._busy = False
        self._pruned: dict[Path, float] = {}
        self._tasks: set[asyncio.Future[Any]] = set()
        self.current_dialog: QDialog | None = None
        self.last_error: str | None = None
        # Set by tests: called with each preview dialog instead of waiting for the person.
        self.answer_preview: Callable[[RestorePreviewDialog], Awaitable[bool]] | None = None

    @property
    def busy(self) -> bool:
        return self._busy

    def start(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        """Run ``coro`` on the loop, keeping a reference; errors are logged, never lost."""
        import asyncio

        task = asyncio.ensure_future(coro)
        self._tasks.add(task)

        def done(t: asyncio.Future[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("checkpoint action failed", exc_info=t.exception())

        task.add_done_callback(done)
        return task

    # -- diff -----------------------------------------------------------------------------------

    async def show_diff(self, checkpointer: Checkpointer, calls: Sequence[CallChanges],
                        title: str) -> DiffDialog | None:
        """Open the read-only diff of what ``calls`` changed."""
        if not calls:
            return None
        try:
            text = await checkpointer.diff(calls)
        except Exception as exc:
            self._error(f"Could not show the changes: {exc}")
            return None
        from app.ui.dialogs.restore_preview import DiffDialog

        dialog = DiffDialog(title, text, self._window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.current_dialog = dialog
        dialog.show()
        self.dialog_shown.emit(dialog)
        return dialog

    # -- undo / redo ---------------------------------------------------------------------------

    async def undo(self, checkpointer: Checkpointer, calls: Sequence[CallChanges], what: str,
                   *, commit: bool = False) -> UndoRecord | None:
        """Undo ``calls`` (in order) after the person saw and accepted the preview; the
        record to redo it with, or None (cancelled, failed, busy)."""
        calls = [c for c in calls if c.changes]
        if not calls:
            self.message.emit("Nothing to undo: no files were changed.")
            return None
        return await self._restore(checkpointer, calls, f"Undo {what}", commit,
                                   lambda: checkpointer.plan_undo(calls))

    async def redo(self, checkpointer: Checkpointer, record: UndoRecord, what: str
                   ) -> UndoRecord | None:
        """Bring back what ``record`` undid (after the preview); None when it did not happen."""
        return await self._restore(checkpointer, record.calls, f"Redo {what}", False,
                                   lambda: checkpointer.plan_redo(record))

    async def _restore(self, checkpointer: Checkpointer, calls: Sequence[CallChanges],
                       title: str, commit: bool, make_plan: Callable[[], Awaitable[Any]]
                       ) -> UndoRecord | None:
        import asyncio

        if self._busy:
            self.message.emit("Another restore is in progress; try again when it is done.")
            return None
        self._set_busy(True)
        try:
            self.message.emit(f"{title}: preparing the preview…")
            plan = await make_plan()
            from app.ui.dialogs.restore_preview import RestorePreviewDialog

            dialog = RestorePreviewDialog(
                plan, title, commit_note=commit, parent=self._window,
                merger=lambda action: self._merge(checkpointer, action))
            if not await self.ask(dialog):
                self.message.emit(f"{title}: cancelled.")
                return None
            merged = dialog.merged_texts()
            resolutions = dialog.resolutions()
            if merged:
                await asyncio.to_thread(_write_merged, checkpointer.project_root, merged)
            record = await checkpointer.apply(plan, calls, resolutions)
        except Exception as exc:
            log.exception("%s failed", title)
            self._error(f"{title} failed: {exc}")
            return None
        finally:
            self._set_busy(False)
        result = record.result
        if result.errors:
            failed = "\n".join(f"{p}: {why}" for p, why in sorted(result.errors.items()))
            self._error(f"{title}: some files could not be restored.\n\n{failed}")
        else:
            done = len(result.written) + len(result.deleted)
            kept = f", {len(result.kept)} kept as you had them" if result.kept else ""
            self.message.emit(f"{title}: {done} file{'s' if done != 1 else ''} restored{kept}.")
        return record

    async def ask(self, dialog: RestorePreviewDialog) -> bool:
        """Show ``dialog`` (window-modal; ``answer_preview`` answers it in tests) until it is
        answered; whether Apply was pressed. Also Review changes' conflicts use it."""
        import asyncio

        self.current_dialog = dialog
        try:
            if self.answer_preview is not None:
                dialog.show()
                self.dialog_shown.emit(dialog)
                return await self.answer_preview(dialog)
            loop = asyncio.get_running_loop()
            answer: asyncio.Future[int] = loop.create_future()

            def finished(code: int) -> None:
                if not answer.done():
                    answer.set_result(code)

            dialog.finished.connect(finished)
            dialog.setWindowModality(Qt.WindowModality.WindowModal)
            dialog.open()
            self.dialog_shown.emit(dialog)
            return await answer == QDialog.DialogCode.Accepted
        finally:
            self.current_dialog = None
            if shiboken6.isValid(dialog):
                dialog.hide()
                dialog.deleteLater()

    async def _merge(self, checkpointer: Checkpointer, action: PlannedAction) -> MergeResult:
        """Three-way merge of a conflict (base: what the agent left; ours: the person's file;
        theirs: the checkpoint's), in a worker thread."""
        import asyncio

        from app.core.checkpoints import CheckpointError, merge_text

        def work() -> MergeResult:
            read = checkpointer.store.read_blob
            base = read(action.expected_blob) if action.expected_blob else b""
            ours = read(action.current_blob) if action.current_blob else b""
            theirs = read(action.target_blob) if action.target_blob else b""
            if any(b"\0" in data for data in (base, ours, theirs)):
                raise CheckpointError("it is a binary file")
            return merge_text(*(data.decode("utf-8", "surrogateescape")
                                for data in (base, ours, theirs)))

        return await asyncio.to_thread(work)

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.busy_changed.emit(busy)

    def _error(self, text: str) -> None:
        self.last_error = text
        self.message.emit(text.splitlines()[0])
        if not shiboken6.isValid(self._window):
            return
        from PySide6.QtWidgets import QMessageBox  # here: the ready window shows none

        box = QMessageBox(QMessageBox.Icon.Warning, "Checkpoints", text,
                          QMessageBox.StandardButton.Ok, self._window)
        box.setObjectName("checkpoint-error")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    # -- housekeeping -----------------------------------------------------------------------

    def prune_in_background(self, checkpointer: Checkpointer | None) -> asyncio.Future[Any] | None:
        """Drop checkpoints past the retention limits (Settings → Checkpoints) in a worker
        thread; at most once an hour per project. Called when a project opens and a run ends."""
        if checkpointer is None or not loop_running():
            return None
        project_root = checkpointer.project_root
        now = time.monotonic()
        last = self._pruned.get(project_root)
        if last is not None and now - last < PRUNE_INTERVAL_S:
            return None
        self._pruned[project_root] = now
        days, max_bytes = self.services.checkpoint_retention()
        return self.start(self._prune(checkpointer, days, max_bytes))

    async def _prune(self, checkpointer: Checkpointer, days: float | None,
                     max_bytes: int | None) -> int:
        import asyncio

        if days is None and max_bytes is None:
            return 0
        # No shadow repository yet: nothing to prune, and none is created for it. Not counted
        # as pruned, so the first prune after the first checkpoint (which recompresses its
        # quickly written pack) is not an hour away.
        if not await asyncio.to_thread(checkpointer.store.shadow_dir.is_dir):
            self._pruned.pop(checkpointer.project_root, None)
            return 0
        try:
            removed = await checkpointer.prune(max_age_days=days, max_bytes=max_bytes)
        except Exception:
            log.exception("pruning the checkpoints of %s failed", checkpointer.project_root)
            return 0
        if removed:
            log.info("pruned %d old checkpoints of %s", removed, checkpointer.project_root)
        return removed

def loop_running() -> bool:
    # Asked before the event loop too (a timer at ready): with asyncio not imported yet no
    # loop can run, and importing it here would put its ~20 ms before ready.
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _write_merged(root: Path, merged: dict[str, str]) -> None:
    """Write merged texts as the person's version (confined to ``root``, no symlinks)."""
    from app.core.checkpoints.restore import ProjectWriter

    writer = ProjectWriter(root)
    for rel, text in merged.items():
        try:
            mode = os.lstat(root / rel).st_mode
        except OSError:
            mode = 0
        executable = stat.S_ISREG(mode) and bool(mode & stat.S_IXUSR)
        writer.write_file(rel, text.encode("utf-8", "surrogateescape"), executable)
