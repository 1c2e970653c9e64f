"""A run's workspace: a clone on its own branch that borrows the project's objects read-only.
Commits work inside the real sandbox (shell git and git_ops); the person's repository (its
objects, refs, stash, config and hooks) never changes; review lists what the run changed and
apply brings it back through the project's checkpoints, undoably, saying where the person
changed a file meanwhile."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from app.core.agent.checkpointing import Checkpointer
from app.core.sandbox import Sandbox
from app.core.tools.base import GitPermission, ToolContext
from app.core.tools.builtin.git_ops import GitOpsTool
from app.core.tools.builtin.shell_exec import create as create_shell
from app.core.worktrees.apply import apply, plan_apply
from app.core.worktrees.host_git import WorktreeError
from app.core.worktrees.review import run_changes
from app.core.worktrees.workspace import RunWorkspace, Worktrees
from tests.sandbox_support import STATUS, requires_sandbox


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def place(visible: Path) -> Path:
    """Outside /tmp (conftest's ``visible``): the sandbox's /tmp is private, so a leak would
    look like containment."""
    return visible


@pytest.fixture
def repo(place: Path) -> Path:
    root = place / "project"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.name", "Person")
    _git(root, "config", "user.email", "person@example.org")
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    (root / "keep.txt").write_text("keep\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "first")
    (root / "wip.txt").write_text("stash me\n")
    _git(root, "add", "wip.txt")
    _git(root, "stash", "-q")
    return root


def _fingerprint(repo: Path) -> dict[str, object]:
    git = repo / ".git"
    objects = sorted(str(p.relative_to(git)) for p in (git / "objects").rglob("*")
                     if p.is_file())
    return {"refs": _git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
            "stash": _git(repo, "stash", "list"), "config": (git / "config").read_bytes(),
            "hooks": sorted(p.name for p in (git / "hooks").iterdir()), "objects": objects}


async def _workspace(place: Path, repo: Path) -> tuple[Worktrees, RunWorkspace]:
    worktrees = Worktrees(place / "data")
    return worktrees, await worktrees.create(repo)


async def test_a_workspace_is_a_clone_on_its_own_branch(place: Path, repo: Path) -> None:
    before = _fingerprint(repo)
    worktrees, ws = await _workspace(place, repo)
    assert ws.ready and ws.branch.startswith("tebiki/")
    assert _git(ws.repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == ws.branch
    assert (ws.repo / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert ws.borrowed == ((repo / ".git" / "objects").resolve(),)
    assert _git(ws.repo, "stash", "list") == ""  # the person's stash is not the run's
    assert _fingerprint(repo) == before
    assert [w.id for w in worktrees.all()] == [ws.id]


@requires_sandbox
async def test_commits_inside_the_sandbox_never_touch_the_persons_repository(
        place: Path, repo: Path) -> None:
    before = _fingerprint(repo)
    _worktrees, ws = await _workspace(place, repo)
    sandbox = Sandbox(STATUS, True, read_only=ws.borrowed)
    ctx = ToolContext(project_root=ws.repo, allowed_write_dirs=(ws.repo,),
                      git_permission=GitPermission.READ_WRITE, sandbox=sandbox,
                      shell_timeout_s=60,
                      tool_config={"shell_exec": {"program_level": "any_sandboxed"}})
    (ws.repo / "a.txt").write_text("one\nTWO\nthree\n")
    git_ops = GitOpsTool()
    added = await git_ops.execute({"action": "add", "args": {"files": ["a.txt"]}}, ctx)
    assert not added.is_error, added.content
    committed = await git_ops.execute({"action": "commit", "args": {"message": "run edit"}},
                                      ctx)
    assert not committed.is_error, committed.content
    shell = next(t for t in create_shell() if t.spec.name == "shell_exec")
    (ws.repo / "new.txt").write_text("new\n")
    result = await shell.execute({"command": "git add new.txt && git commit -q -m shell"},
                                 ctx)
    assert not result.is_error, result.content
    log = _git(ws.repo, "log", "--format=%s", ws.branch)
    assert log.splitlines()[:2] == ["shell", "run edit"]
    # An attack from inside: rewrite a borrowed object, stash, move main, plant a hook.
    attack = await shell.execute({"command": (
        f"sh -c 'for f in $(find {ws.borrowed[0]} -type f); do echo x > $f; done; "
        f"echo evil > {repo}/.git/hooks/pre-commit; "
        f"git --git-dir={repo}/.git update-ref refs/heads/main HEAD; "
        f"git stash drop; echo ran'")}, ctx)
    assert "ran" in attack.content, attack.content  # it ran; the walls decide:
    assert _fingerprint(repo) == before
    assert (repo / "a.txt").read_text() == "one\ntwo\nthree\n"


async def test_review_and_apply_through_checkpoints_with_undo(place: Path, repo: Path) -> None:
    worktrees, ws = await _workspace(place, repo)
    (ws.repo / "a.txt").write_text("one\ntwo\nthree\nfour\n")  # appended by the run
    (ws.repo / "added.txt").write_text("from the run\n")
    (ws.repo / "keep.txt").unlink()
    _git(ws.repo, "add", "-A")
    _git(ws.repo, "commit", "-q", "-m", "run work")
    (ws.repo / "uncommitted.txt").write_text("not committed\n")
    (repo / "a.txt").write_text("ONE\ntwo\nthree\n")  # the person, meanwhile
    changes = await run_changes(worktrees, ws)
    assert [(c.path, c.status) for c in changes] == [
        ("a.txt", "modified"), ("added.txt", "added"), ("keep.txt", "deleted"),
        ("uncommitted.txt", "added")]
    items = await plan_apply(ws, repo, changes)
    by_path = {i.path: i for i in items}
    assert by_path["a.txt"].conflict and not by_path["added.txt"].conflict
    checkpointer = Checkpointer(place / "data" / "checkpoints", repo)
    changed = await apply(repo, items, {"a.txt": "merge"}, checkpointer, "apply run")
    assert (repo / "a.txt").read_text() == "ONE\ntwo\nthree\nfour\n"  # both kept
    assert (repo / "added.txt").read_text() == "from the run\n"
    assert not (repo / "keep.txt").exists()
    assert changed is not None and "a.txt" in changed.paths
    plan = await checkpointer.plan_undo([changed])
    await checkpointer.apply(plan, [changed])
    assert (repo / "a.txt").read_text() == "ONE\ntwo\nthree\n"
    assert (repo / "keep.txt").read_text() == "keep\n"
    assert not (repo / "added.txt").exists()


async def test_apply_never_writes_outside_the_project(place: Path, repo: Path) -> None:
    worktrees, ws = await _workspace(place, repo)
    outside = place / "outside"
    outside.mkdir()
    (repo / "link").symlink_to(outside)
    (ws.repo / "link").unlink() if (ws.repo / "link").is_symlink() else None
    (ws.repo / "link").mkdir()
    (ws.repo / "link" / "x.txt").write_text("escape\n")
    items = await plan_apply(ws, repo, await run_changes(worktrees, ws))
    with pytest.raises(WorktreeError):
        await apply(repo, items, {}, None, "apply")
    assert not (outside / "x.txt").exists()


async def test_stale_workspaces_are_listed_and_removed(place: Path, repo: Path) -> None:
    worktrees, ws = await _workspace(place, repo)
    attached = worktrees.attach(ws, 42)
    assert worktrees.stale(lambda cid: cid == 42) == []
    assert [w.id for w in worktrees.stale(lambda cid: False)] == [ws.id]
    half = worktrees.root / "20260101-000000-abcdef"  # a crash while creating one
    half.mkdir()
    assert {w.id for w in worktrees.stale(lambda cid: True)} == {half.name}
    await worktrees.remove(attached, keep_branch=True)
    assert not (worktrees.root / ws.id).exists()
    assert ws.branch in _git(repo, "branch", "--list", ws.branch)
    for stale in worktrees.stale(lambda cid: True):
        await worktrees.remove(stale)
    assert worktrees.all() == []


def test_a_folder_without_a_repository_is_refused(place: Path) -> None:
    plain = place / "plain"
    plain.mkdir()
    with pytest.raises(WorktreeError):
        asyncio.run(Worktrees(place / "data").create(plain))
