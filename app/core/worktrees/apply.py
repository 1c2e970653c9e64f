"""Bringing a run's work back into the project: per file, through the project's checkpoints.

For each changed file there are three versions: the run's base commit (``base``), the project
now (``mine``: the person may have changed it meanwhile) and the run's (``theirs``). A file
the person did not touch since the run started takes the run's version; one both changed is a
conflict the person resolves (keep mine, take theirs, or a three-way merge with conflict
markers where they overlap, or the merged text the person edited in the restore merge UI).
Everything written is recorded by a checkpoint before and after, so the apply is one change set
of the project's checkpoints that "Undo" takes back (apply_record.py keeps it in a
conversation). Files are written only inside the project,
never through a symlink, never into a ``.git``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from app.core.agent.checkpointing import CallChanges, Checkpointer
from app.core.worktrees.host_git import WorktreeError, host_git
from app.core.worktrees.review import RunChange, at_base, checked_path, in_run, read_in
from app.core.worktrees.workspace import RunWorkspace

Resolution = Literal["mine", "theirs", "merge"]


@dataclass(frozen=True)
class ApplyItem:
    path: str
    base: bytes | None
    mine: bytes | None
    theirs: bytes | None

    @property
    def changed_meanwhile(self) -> bool:
        """The project's file is no longer what the run started from."""
        return self.mine != self.base

    @property
    def conflict(self) -> bool:
        return self.changed_meanwhile and self.mine != self.theirs


async def plan_apply(workspace: RunWorkspace, project: Path,
                     changes: Sequence[RunChange]) -> list[ApplyItem]:
    """The three versions of every file in ``changes`` (``project``: the folder the run was
    made from, inside ``workspace.source``)."""
    items = []
    for change in changes:
        base = await at_base(workspace, change.path)
        theirs = await in_run(workspace, change.path)
        mine = await asyncio.to_thread(read_in, project, change.path)
        items.append(ApplyItem(change.path, base, mine, theirs))
    return items


def written(items: Sequence[ApplyItem], resolutions: Mapping[str, Resolution]) -> list[str]:
    """The paths ``apply`` writes: a conflict only when resolved other than "mine"."""
    return [i.path for i in items
            if resolutions.get(i.path, "theirs" if not i.conflict else "mine") != "mine"]


async def apply(project: Path, items: Sequence[ApplyItem],
                resolutions: Mapping[str, Resolution], checkpointer: Checkpointer | None,
                label: str, merged: Mapping[str, bytes] | None = None) -> CallChanges | None:
    """Write ``items`` into ``project`` (a conflict as ``resolutions`` says; unresolved ones
    are skipped; "merge" writes ``merged[path]`` when given, else a three-way merge), between
    two checkpoints; the change set, for undo (its ``tool_use_id`` is ``label``)."""
    before = await checkpointer.snapshot(f"before {label}") if checkpointer else None
    chosen = set(written(items, resolutions))
    for item in items:
        if item.path not in chosen:
            continue
        choice = resolutions.get(item.path, "theirs")
        if choice == "theirs":
            content = item.theirs
        elif merged is not None and item.path in merged:
            content = merged[item.path]
        else:
            content = await _merged(item)
        await asyncio.to_thread(_write, project, item.path, content)
    if checkpointer is None or before is None:
        return None
    return await checkpointer.around_call_end(label, before)


async def _merged(item: ApplyItem) -> bytes | None:
    """A three-way merge of the file (git merge-file: conflict markers where both changed the
    same lines); a deletion on either side keeps the other's content."""
    if item.theirs is None or item.mine is None:
        return item.mine if item.theirs is None else item.theirs
    with tempfile.TemporaryDirectory(prefix="tebiki-merge-") as tmp:
        folder = Path(tmp)
        for name, data in (("mine", item.mine), ("base", item.base or b""),
                           ("theirs", item.theirs)):
            (folder / name).write_bytes(data)
        await host_git(folder, "merge-file", "-L", "yours", "-L", "started from", "-L",
                       "the run", "mine", "base", "theirs", check=False)
        return (folder / "mine").read_bytes()


def _write(project: Path, path: str, content: bytes | None) -> None:
    parts = PurePosixPath(checked_path(path)).parts
    root = project.resolve()
    target = root.joinpath(*parts)
    parent = target.parent
    # Every folder on the way must be a real folder inside the project (no symlink out).
    current = root
    for part in parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            raise WorktreeError(f"refusing to write {path}: {current} is not a folder")
    if target.is_symlink():
        raise WorktreeError(f"refusing to write {path}: it is a symbolic link")
    if content is None:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
        return
    parent.mkdir(parents=True, exist_ok=True)
    tmp = parent / f".{target.name}.tebiki-apply"
    tmp.write_bytes(content)
    os.replace(tmp, target)
