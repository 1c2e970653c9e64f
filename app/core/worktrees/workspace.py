"""A run's own workspace: a clone of the project on a new branch, in Tebiki's data folder.

Why a clone that borrows, not ``git worktree add``: a linked worktree shares the project's
object store, refs, ``refs/stash`` and config; a program in it that may commit can also replace
a loose object or move another branch, which changes what the person checks out later. Here the
clone is made with ``git clone --shared``: the project's objects are *read* through
``objects/info/alternates`` (shown read-only to the sandbox, ``RunWorkspace.borrowed``), and
every object, ref, index and stash of the run is written in the clone's own ``.git``. Commits
work inside the sandbox (shell ``git commit`` and git_ops), the person's repository is never
writable from it, and bringing a branch back is Tebiki's own hardened ``git fetch``, which
only adds objects whose hashes it checks.

A workspace is recorded in ``<data>/worktrees/<id>/run.json`` (outside every sandbox, so what
a program in the run writes cannot change what Tebiki trusts about it). One that was never
finished (a crash while creating it), whose project is gone, or whose conversation no longer
exists is *stale*: listed by ``Worktrees.stale`` and removed by ``Worktrees.remove``.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from app.core.worktrees.host_git import WorktreeError, host_git

BRANCH_PREFIX = "tebiki/"
RECORD = "run.json"
# The hardened git allows no transport; a clone and a fetch between two folders of this
# machine need the local one, and only that (never ssh, http or ext).
LOCAL_ONLY = ("-c", "protocol.file.allow=always")


@dataclass(frozen=True)
class RunWorkspace:
    id: str
    repo: Path  # the clone's work tree: the run's project folder
    source: Path  # the project's repository root
    branch: str
    base: str  # the commit the run started from
    borrowed: tuple[Path, ...]  # object stores read through alternates (read-only)
    created_at: float
    ready: bool = False
    conversation_id: int | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(repo=str(self.repo), source=str(self.source),
                    borrowed=[str(p) for p in self.borrowed])
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunWorkspace:
        return cls(id=str(data["id"]), repo=Path(data["repo"]), source=Path(data["source"]),
                   branch=str(data["branch"]), base=str(data["base"]),
                   borrowed=tuple(Path(p) for p in data.get("borrowed") or ()),
                   created_at=float(data["created_at"]), ready=bool(data.get("ready")),
                   conversation_id=data.get("conversation_id"))


class Worktrees:
    """The run workspaces under ``data_dir/worktrees``."""

    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / "worktrees"

    async def create(self, project: Path) -> RunWorkspace:
        """A clone of ``project``'s repository at its HEAD, on a new branch ``tebiki/<id>``.
        Raises WorktreeError (not a repository, no commit yet, git failed)."""
        project = project.resolve()
        top = (await host_git(project, "rev-parse", "--show-toplevel")).stdout.strip()
        if not top:
            raise WorktreeError(f"{project} is not inside a git repository")
        source = Path(top).resolve()
        base = (await host_git(source, "rev-parse", "--verify", "HEAD^{commit}")).stdout.strip()
        run_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
        home = self.root / run_id
        repo = home / "repo"
        await asyncio.to_thread(home.mkdir, parents=True)
        workspace = RunWorkspace(run_id, repo, source, BRANCH_PREFIX + run_id, base, (),
                                 time.time())
        await asyncio.to_thread(self._save, workspace)
        await host_git(home, *LOCAL_ONLY, "clone", "--shared", "--no-checkout", "--quiet", "--",
                       str(source), str(repo))
        borrowed = await asyncio.to_thread(_alternates, repo)
        await _copy_identity(source, repo)
        await host_git(repo, "checkout", "--quiet", "-b", workspace.branch, base)
        workspace = replace(workspace, borrowed=borrowed, ready=True)
        await asyncio.to_thread(self._save, workspace)
        return workspace

    def all(self) -> list[RunWorkspace]:
        """Every workspace recorded here (reads files: off the GUI thread)."""
        found = []
        try:
            homes = sorted(p for p in self.root.iterdir() if p.is_dir())
        except OSError:
            return []
        for home in homes:
            try:
                data = json.loads((home / RECORD).read_text(encoding="utf-8"))
                found.append(RunWorkspace.from_json(data))
            except (OSError, ValueError, KeyError, TypeError):
                found.append(RunWorkspace(home.name, home / "repo", Path(), "", "", (), 0.0))
        return found

    def stale(self, conversation_exists: Callable[[int], bool]) -> list[RunWorkspace]:
        """Workspaces left behind: never finished, their project gone, or their conversation
        deleted (a workspace not yet given to a conversation counts as left behind)."""
        return [w for w in self.all()
                if not w.ready or not w.source.is_dir() or w.conversation_id is None
                or not conversation_exists(w.conversation_id)]

    def attach(self, workspace: RunWorkspace, conversation_id: int) -> RunWorkspace:
        """Record which conversation runs in ``workspace``."""
        attached = replace(workspace, conversation_id=conversation_id)
        self._save(attached)
        return attached

    async def remove(self, workspace: RunWorkspace, *, keep_branch: bool = False) -> None:
        """Delete the workspace; with ``keep_branch``, first fetch its branch into the project
        (Tebiki's git: only new objects, hash-checked; an existing branch is never moved)."""
        if keep_branch and workspace.ready:
            await self.restore_alternates(workspace)
            await host_git(workspace.source, *LOCAL_ONLY, "fetch", "--quiet", "--no-tags", "--",
                           str(workspace.repo),
                           f"refs/heads/{workspace.branch}:refs/heads/{workspace.branch}")
        home = self.root / workspace.id
        await asyncio.to_thread(shutil.rmtree, home, ignore_errors=True)

    async def restore_alternates(self, workspace: RunWorkspace) -> None:
        """Before Tebiki's own git reads the clone: its alternates are the ones recorded at
        creation, whatever a program in the run wrote there."""
        def write() -> None:
            info = workspace.repo / ".git" / "objects" / "info"
            info.mkdir(parents=True, exist_ok=True)
            target = info / "alternates"
            if target.is_symlink() or target.exists():
                target.unlink()
            target.write_text("".join(f"{p}\n" for p in workspace.borrowed), encoding="utf-8")
        await asyncio.to_thread(write)

    def _save(self, workspace: RunWorkspace) -> None:
        home = self.root / workspace.id
        tmp = home / (RECORD + ".tmp")
        tmp.write_text(json.dumps(workspace.to_json()), encoding="utf-8")
        tmp.replace(home / RECORD)


async def _copy_identity(source: Path, repo: Path) -> None:
    """The person's name and e-mail as the project's git sees them, so a commit in the run
    is theirs (the clone's config is read-only to the run's programs)."""
    for key in ("user.name", "user.email"):
        value = (await host_git(source, "config", "--get", key, check=False)).stdout.strip()
        if value:
            await host_git(repo, "config", key, value)


def _alternates(repo: Path) -> tuple[Path, ...]:
    """What ``git clone --shared`` wrote (read once, right after the clone: trusted)."""
    try:
        text = (repo / ".git" / "objects" / "info" / "alternates").read_text(encoding="utf-8")
    except OSError:
        return ()
    return tuple(Path(line.strip()).resolve() for line in text.splitlines()
                 if line.strip() and not line.startswith("#"))
