"""What a run changed, for "Review changes": every file that differs between the commit it
started from and its work tree now (its commits, its uncommitted edits, its new files), each
with the three versions a merge needs."""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from app.core.worktrees.host_git import WorktreeError, host_git
from app.core.worktrees.workspace import RunWorkspace, Worktrees

MAX_FILE_BYTES = 10 * 1024 * 1024
Status = Literal["added", "modified", "deleted"]


@dataclass(frozen=True)
class RunChange:
    path: str  # relative, "/"-separated
    status: Status


async def run_changes(worktrees: Worktrees, workspace: RunWorkspace) -> list[RunChange]:
    """The files the run changed against its base commit, sorted by path."""
    await worktrees.restore_alternates(workspace)
    repo = workspace.repo
    diff = await host_git(repo, "diff", "--name-status", "--no-renames", "-z",
                          workspace.base, "--")
    untracked = await host_git(repo, "ls-files", "--others", "--exclude-standard", "-z")
    changes: dict[str, Status] = {}
    fields = diff.stdout.split("\0")
    for code, path in zip(fields[0::2], fields[1::2], strict=False):
        if not path:
            continue
        status: Status = "added" if code[:1] == "A" else \
            "deleted" if code[:1] == "D" else "modified"
        changes[checked_path(path)] = status
    for path in untracked.stdout.split("\0"):
        if path:
            changes[checked_path(path)] = "added"
    return [RunChange(p, s) for p, s in sorted(changes.items())]


def checked_path(path: str) -> str:
    """``path`` when it is a plain relative path inside a work tree (no ``..``, not absolute,
    not in a ``.git``); WorktreeError otherwise."""
    parts = PurePosixPath(path).parts
    if not parts or path.startswith("/") or any(p in ("..", ".git", "") for p in parts):
        raise WorktreeError(f"refusing the path {path!r} from the run")
    return "/".join(parts)


async def at_base(workspace: RunWorkspace, path: str) -> bytes | None:
    """The file as it was in the run's base commit (None: it did not exist)."""
    path = checked_path(path)
    exists = await host_git(workspace.repo, "cat-file", "-e", f"{workspace.base}:{path}",
                            check=False)
    if not exists.success:
        return None
    # Bytes as they are (git's stdout reaches us as text): restored into a folder of our own,
    # without touching the run's index or work tree.
    with tempfile.TemporaryDirectory(prefix="tebiki-base-") as tmp:
        await host_git(workspace.repo, f"--git-dir={workspace.repo / '.git'}",
                       f"--work-tree={tmp}", "restore", f"--source={workspace.base}",
                       "--worktree", "--", path)
        return await asyncio.to_thread(read_in, Path(tmp), path)


def read_in(root: Path, path: str) -> bytes | None:
    """The file ``path`` under ``root`` now, never through a symlink out of it (None: no such
    regular file)."""
    target = root.joinpath(*PurePosixPath(checked_path(path)).parts)
    try:
        if target.is_symlink() or not target.is_file():
            return None
        if not target.resolve().is_relative_to(root.resolve()):
            return None
        if target.stat().st_size > MAX_FILE_BYTES:
            raise WorktreeError(f"{path} is larger than {MAX_FILE_BYTES} bytes")
        return target.read_bytes()
    except OSError:
        return None


async def in_run(workspace: RunWorkspace, path: str) -> bytes | None:
    return await asyncio.to_thread(read_in, workspace.repo, path)
