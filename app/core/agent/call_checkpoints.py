"""The checkpoints around one tool call, for the call runner: the one before it (and, for a
call that runs unasked, what that checkpoint does not record, to keep read-only), the one
after it with the change set, and the note for the model when a call needed a protected path.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from app.core.agent.checkpointing import CallChanges, Checkpointer
from app.core.agent.models import ToolCall
from app.core.checkpoints import Checkpoint
from app.core.checkpoints.coverage import RECORDS_GIT_STATE, remember_needs_unrecorded
from app.core.checkpoints.coverage import SESSION_KEY as COVERAGE_KEY
from app.core.checkpoints.frozen_rules import FrozenRules
from app.core.tools.base import ToolSpec
from app.core.tools.persistence import persistence_changes
from app.core.tools.project_tree import persistence_paths, scan_tree
from app.core.tools.shell.jobs import active_jobs

log = logging.getLogger(__name__)

# the conversation's newest "after" checkpoint, and the time.time() it was begun at
LAST_CHECKPOINT = "checkpoints.last"

GIT_BEFORE_KEY = "checkpoints.git_entries_before"


def _git_entries(root: Path) -> frozenset[Path]:
    scan = scan_tree(root)
    return frozenset((*scan.git_dirs, *scan.git_files))


def _remove_new_git_entries(root: Path, before: frozenset[Path] | None) -> list[str]:
    """Remove the ``.git`` folders and files (gitdir pointers) that appeared under ``root``
    since ``before``: checkpoints never record git metadata, and a new repository's config
    or hooks would run in the person's git later. Only what is new goes; the names removed."""
    if before is None:
        return []
    removed: list[str] = []
    for path in sorted(_git_entries(root) - before):
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            log.exception("could not remove planted git metadata %s", path)
            continue
        removed.append(os.path.relpath(path, root))
    return removed


class CallCheckpoints:
    """The checkpoints around each call of one conversation. Keeps the newest checkpoint's
    coverage in the conversation's tool session (``tool_session``), where the permission
    facts read it; ``recorded(row, call, changes)`` is told every change set (the audit row
    and the card)."""

    def __init__(self, tool_session: dict[str, Any],
                 recorded: Callable[[Future[int], ToolCall, CallChanges], None]) -> None:
        self._tool_session = tool_session
        self._recorded = recorded
        # the ignore rules of the run being checkpointed, read before its first call that
        # may change files: its calls cannot edit what its checkpoints record
        self._run: object = None
        self._rules: FrozenRules | None = None

    async def before(self, call: ToolCall, spec: ToolSpec,
                                 checkpointer: Checkpointer | None, unasked: bool,
                                 run: object = None
                                 ) -> tuple[Checkpoint | None, tuple[Path, ...] | None]:
        """(the checkpoint before the call, the paths it must find read-only). The paths are
        None when a call that runs unasked cannot have them (no checkpoint, or too many).
        ``run`` (the run's state) is whose ignore rules the checkpoints keep."""
        if checkpointer is None:
            return None, ()
        if run is None or run is not self._run:
            self._run = run
            self._rules = await checkpointer.freeze_rules()
        before = await checkpointer.snapshot(f"before {call.id}", self._rules)
        if before is not None:
            self._tool_session[COVERAGE_KEY] = checkpointer.coverage(before)
        protected = checkpointer.protected_paths(
            before, needs_repository=spec.annotations.get(RECORDS_GIT_STATE) is True) \
            if unasked else ()
        if unasked and protected is not None:
            # What the person's tools run by themselves (git hooks, editor tasks, .envrc,
            # .pth files) stays read-only too: a checkpoint could undo it, but not what runs
            # before anyone looks.
            # (The project's own .git is the git level's and git_ops' business: see
            # command_sandbox and the repository state the checkpoints record.)
            own_git = checkpointer.project_root / ".git"
            existing = await asyncio.to_thread(persistence_paths, checkpointer.project_root)
            self._tool_session[GIT_BEFORE_KEY] = await asyncio.to_thread(
                _git_entries, checkpointer.project_root)
            protected = (*protected, *(p for p in existing if p != own_git))
        last = self._tool_session.get(LAST_CHECKPOINT)
        if before is not None and isinstance(last, tuple) and \
                active_jobs(self._tool_session, last[1]):
            # Background jobs may have written since this conversation's last checkpoint:
            # their changes are this call's change set too (on its card, undone with it).
            return last[0], protected
        return before, protected

    def note_read_only(self, call: ToolCall, checkpointer: Checkpointer | None,
                        protected: tuple[Path, ...], content: str) -> str:
        """``content``, with a note for the model when the call failed on a protected path;
        the session remembers the call, so that the facts make the same call ask next time."""
        if not protected or checkpointer is None:
            return content
        note = checkpointer.read_only_note(content or "", protected)
        if not note:
            return content
        remember_needs_unrecorded(self._tool_session, call.name, call.input)
        return f"{content}\n\n{note}" if content else note

    async def revert_persistence(self, call: ToolCall, checkpointer: Checkpointer,
                                  changes: CallChanges | None, content: str) -> str:
        """After a call that ran unasked: the persistence files it created (which no mount
        could keep read-only, they did not exist) are put back as they were, and the model is
        told why. ``content`` with that note."""
        if changes is None:
            return content
        planted = await asyncio.to_thread(
            _remove_new_git_entries, checkpointer.project_root,
            self._tool_session.pop(GIT_BEFORE_KEY, None))
        if planted:
            remember_needs_unrecorded(self._tool_session, call.name, call.input)
            note = (f"[Tebiki: this call created git metadata ({', '.join(planted[:5])}), "
                    "which the person's own git would run; it was removed. Calling it again "
                    "asks the person.]")
            content = f"{content}\n\n{note}" if content else note
        found = persistence_changes(changes.paths)
        if not found:
            return content
        paths = [path for path, _reason in found]
        try:
            plan = await asyncio.to_thread(checkpointer.store.plan_restore, changes.before,
                                           changes.after, paths)
            await asyncio.to_thread(checkpointer.store.restore, plan, {})
        except Exception:
            log.exception("could not undo the persistence writes of %s", changes.tool_use_id)
            undone = "could not be undone; the person must check them"
        else:
            undone = "were undone"
        remember_needs_unrecorded(self._tool_session, call.name, call.input)
        listed = "; ".join(f"{path} ({reason})" for path, reason in found[:5])
        note = (f"[Tebiki: this call's changes to {listed} {undone}. Files that run by "
                "themselves later need the person's approval: calling it again asks them.]")
        return f"{content}\n\n{note}" if content else note

    async def record_changes(self, checkpointer: Checkpointer, call: ToolCall,
                              before: Checkpoint | None, row: Future[int]
                              ) -> CallChanges | None:
        """The checkpoint after a call: its change set goes to the card and the audit row."""
        started = time.time()  # a job that ended after this may be missing from `after`
        changes = await checkpointer.around_call_end(call.id, before, self._rules)
        if changes is not None:
            self._tool_session[COVERAGE_KEY] = checkpointer.coverage(changes.after)
            self._tool_session[LAST_CHECKPOINT] = (changes.after, started)
            self._recorded(row, call, changes)
        return changes
