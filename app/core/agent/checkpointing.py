"""Checkpoints around the agent's tool calls: what each call changed, and undo / redo.

Before a call that can change files (``ToolSpec.may_change_files``) the project folder's state
is recorded in the shadow repository (``app.core.checkpoints``); after it, again, and the
difference is the call's change set — whether the tool wrote the files or a command's side
effects did. The change set goes on the call's card and into its audit row, and undoing a call,
a run or everything since a message is a restore of the earliest "before" over the paths those
calls changed, checked against the latest "after" so that a file the person edited since is
shown as a conflict instead of being overwritten.

All git work runs in a worker thread, one operation at a time per project (the engine's own
lock), so the GUI never waits for it. A checkpoint that fails (no git, a full disk) never stops
the call: the call runs, and its card says it cannot be undone.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.core.checkpoints import (
    Checkpoint,
    CheckpointStore,
    FileChange,
    RestorePlan,
    RestoreResult,
)
from app.core.checkpoints.coverage import Coverage
from app.core.checkpoints.frozen_rules import FrozenRules
from app.core.checkpoints.model import Resolution
from app.core.settings_fields import CHECKPOINT_MAX_FILE

__all__ = ["UNRECORDED_ASK", "CallChanges", "Checkpointer", "UndoRecord"]

log = logging.getLogger(__name__)

UNRECORDED_ASK = ("the checkpoint before this call could not be taken (or could not keep what "
                  "it does not record read-only), so it could not be undone: a person decides")

# What a program prints when it tried to change a read-only mount, and ScopedFs's refusal.
_READ_ONLY_SIGNS = ("Read-only file system", "Device or resource busy", "is read-only to this call")


@dataclass(frozen=True)
class CallChanges:
    """What one call changed: the checkpoints around it and the files between them."""

    tool_use_id: str
    before: Checkpoint
    after: Checkpoint
    changes: tuple[FileChange, ...]

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path the call touched (both names of a rename)."""
        out: list[str] = []
        for change in self.changes:
            for path in (change.old_path, change.path):
                if path and path not in out:
                    out.append(path)
        return tuple(out)

    @property
    def not_covered(self) -> tuple[str, ...]:
        """What this call made uncovered or brought into cover (a file that grew over the size
        cap, a nested repository it created): its changes there cannot be undone. Files that
        were out of cover before and after are the project's, not the call's (the preview and
        Settings say what checkpoints never cover)."""
        return tuple(sorted(set(self.before.skipped) ^ set(self.after.skipped)))

    @property
    def created_unrecorded(self) -> tuple[str, ...]:
        """Ignored files and folders the call made (undo deletes them)."""
        return tuple(sorted(set(self.after.ignored) - set(self.before.unrecorded)))

    @property
    def removed_unrecorded(self) -> tuple[str, ...]:
        """Unrecorded files and folders that were there before the call and are gone: undo
        cannot bring them back (only a call the person approved can do that)."""
        return tuple(sorted(set(self.before.unrecorded) - set(self.after.unrecorded)))

    def summary(self) -> str:
        n = len(self.changes) + len(self.created_unrecorded)
        text = "no files changed" if n == 0 else f"{n} file{'s' if n != 1 else ''} changed"
        gone = self.removed_unrecorded
        if gone:
            text += f"; {len(gone)} unrecorded gone, cannot be undone ({', '.join(gone[:3])})"
        return text

    def to_json(self) -> dict[str, object]:
        """The audit row's record of the change set."""
        return {
            "before": self.before.id,
            "after": self.after.id,
            "changes": [{"path": c.path, "kind": c.kind, "old_path": c.old_path,
                         "binary": c.binary} for c in self.changes],
            "not_covered": list(self.not_covered),
            "created_unrecorded": list(self.created_unrecorded),
            "removed_unrecorded": list(self.removed_unrecorded),
        }


@dataclass(frozen=True)
class UndoRecord:
    """An applied restore, kept so that it can be redone: ``result.before`` is the state the
    restore replaced, ``after`` the state it left."""

    calls: tuple[CallChanges, ...]
    result: RestoreResult
    after: Checkpoint
    stopped_jobs: tuple[str, ...] = ()  # background jobs stopped before restoring


class Checkpointer:
    """The checkpoints of one project folder (see the module docstring)."""

    def __init__(self, data_dir: Path, project_root: Path, *,
                 max_file_bytes: int = CHECKPOINT_MAX_FILE.default,
                 extra_excludes: Sequence[str] = ()) -> None:
        self.project_root = Path(project_root).resolve()
        self.store = CheckpointStore(data_dir, self.project_root, max_file_bytes=max_file_bytes,
                                     extra_excludes=extra_excludes)
        # The open conversations' "stop your background jobs" (AgentSession registers one):
        # a job still writing would undo the undo, or be undone half-way.
        self.job_stoppers: set[Callable[[], Awaitable[list[str]]]] = set()

    async def snapshot(self, label: str, rules: FrozenRules | None = None
                       ) -> Checkpoint | None:
        """Record the folder now (with a run's ignore ``rules``); None (logged) when that
        fails."""
        try:
            return await asyncio.to_thread(self.store.snapshot, label, rules)
        except Exception:
            log.exception("checkpoint of %s failed", self.project_root)
            return None

    async def freeze_rules(self) -> FrozenRules | None:
        """The ignore rules now, for a run's checkpoints; None (logged) when unreadable."""
        try:
            return await asyncio.to_thread(self.store.freeze_rules)
        except Exception:
            log.exception("reading the ignore rules of %s failed", self.project_root)
            return None

    def coverage(self, checkpoint: Checkpoint) -> Coverage:
        return Coverage.of(self.project_root, checkpoint)

    def protected_paths(self, before: Checkpoint | None, *, needs_repository: bool = False
                        ) -> tuple[Path, ...] | None:
        """What a call that runs unasked must find read-only: everything ``before`` does not
        record. None when that cannot be (no checkpoint, too many paths to mount, or the call
        changes the project repository and ``before`` has not recorded it)."""
        if before is None or (needs_repository and before.repo is None):
            return None
        coverage = self.coverage(before)
        return coverage.protected_paths() if coverage.protectable else None

    def read_only_note(self, output: str, protected: Sequence[Path]) -> str:
        """For the model, when a call's output shows it needed a protected path: which, and
        that the person must approve such a call ("" when the output shows nothing of it)."""
        if not any(sign in output for sign in _READ_ONLY_SIGNS):
            return ""
        rels = [p.relative_to(self.project_root).as_posix() for p in protected
                if p.is_relative_to(self.project_root)]
        named = [r for r in rels if r in output] or rels
        if not named:
            return ""
        shown = ", ".join(named[:5]) + (" …" if len(named) > 5 else "")
        return (f"[Tebiki] {shown} {'was' if len(named) == 1 else 'were'} read-only to this "
                "call: checkpoints do not record it (ignored by .gitignore or built-in rules, "
                "too large, a special file, or a repository of its own), so undo could not "
                "bring it back, and this call ran without asking the person. A call that "
                "changes it needs the person's approval: calling it again will ask them.")

    async def around_call_end(self, tool_use_id: str, before: Checkpoint | None,
                              rules: FrozenRules | None = None) -> CallChanges | None:
        """After the call: the second checkpoint and what changed since ``before``."""
        if before is None:
            return None
        after = await self.snapshot(f"after {tool_use_id}", rules)
        if after is None:
            return None
        try:
            changes = await asyncio.to_thread(self.store.changes, before, after)
        except Exception:
            log.exception("comparing checkpoints of %s failed", self.project_root)
            return None
        return CallChanges(tool_use_id, before, after, tuple(changes))

    async def diff(self, calls: Sequence[CallChanges], max_bytes: int = 200_000) -> str:
        """The unified diff of what these calls changed (first "before" to last "after")."""
        first, last = calls[0], calls[-1]
        return await asyncio.to_thread(self.store.diff_text, first.before, last.after,
                                       _union_paths(calls), max_bytes)

    async def plan_undo(self, calls: Sequence[CallChanges]) -> RestorePlan:
        """Restore the files these calls changed to before the first of them. The plan lists
        conflicts: files that differ from what the last call left (the person edited them)."""
        first, last = calls[0], calls[-1]
        return await asyncio.to_thread(functools.partial(
            self.store.plan_restore, first.before, last.after, _union_paths(calls),
            remove_created_unrecorded=True))

    async def plan_redo(self, undo: UndoRecord) -> RestorePlan:
        """Bring back what an undo replaced, checked against the state the undo left."""
        return await asyncio.to_thread(self.store.plan_restore, undo.result.before, undo.after,
                                       _union_paths(undo.calls))

    async def apply(self, plan: RestorePlan, calls: Sequence[CallChanges],
                    resolutions: Mapping[str, Resolution] | None = None) -> UndoRecord:
        """Carry out a plan (conflicts as ``resolutions`` say; unresolved ones are kept),
        after stopping the background jobs still running (named in the record)."""
        stopped: list[str] = []
        for stop in list(self.job_stoppers):
            stopped += await stop()
        result = await asyncio.to_thread(self.store.restore, plan, dict(resolutions or {}))
        after = await self.snapshot("after restore")
        return UndoRecord(tuple(calls), result, after if after is not None else plan.target,
                          tuple(stopped))

    async def usage_bytes(self) -> int:
        return await asyncio.to_thread(self.store.usage_bytes)

    async def prune(self, *, max_age_days: float | None, max_bytes: int | None) -> int:
        return await asyncio.to_thread(self.store.prune, max_age_days=max_age_days,
                                       max_bytes=max_bytes)


def _union_paths(calls: Iterable[CallChanges]) -> list[str]:
    out: list[str] = []
    for call in calls:
        for path in call.paths:
            if path not in out:
                out.append(path)
    return out
