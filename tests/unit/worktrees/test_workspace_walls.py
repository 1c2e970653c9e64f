"""The walls of a run workspace, tried as an attacker from inside the real sandbox
(bubblewrap): a program of the run cannot change the person's shared git config, hooks, other
branches, stash or any existing object (loose or packed, reached through the alternates path),
cannot push into the project, and cannot write outside its worktree. Each attack runs (it
prints that it ran); what is checked is its side effect."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.sandbox import Sandbox
from app.core.tools.base import GitPermission, ToolContext
from app.core.tools.builtin.shell_exec import create as create_shell
from app.core.worktrees.workspace import RunWorkspace, Worktrees
from tests.sandbox_support import STATUS, requires_sandbox
from tests.unit.worktrees.test_run_workspace import _git

pytestmark = requires_sandbox


@pytest.fixture
def repo(visible: Path) -> Path:
    """A project with a branch besides main, a stash, and both a pack and loose objects."""
    root = visible / "project"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("one\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "first")
    _git(root, "branch", "other")
    _git(root, "gc", "-q")  # the first commit's objects in a pack
    (root / "b.txt").write_text("two\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "second")  # loose objects
    (root / "wip.txt").write_text("stash me\n")
    _git(root, "add", "wip.txt")
    _git(root, "stash", "-q")
    return root


def _state(repo: Path) -> dict[str, object]:
    git = repo / ".git"
    files = {str(p.relative_to(git)): p.read_bytes() for p in git.rglob("*")
             if p.is_file() and not p.is_symlink() and p.name != "index"
             and "logs" not in p.parts}
    return {"refs": _git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
            "stash": _git(repo, "stash", "list"), "files": files,
            "tree": sorted(str(p.relative_to(repo)) for p in repo.rglob("*")
                           if ".git" not in p.parts)}


async def _attack(workspace: RunWorkspace, script: str) -> str:
    ctx = ToolContext(project_root=workspace.repo, allowed_write_dirs=(workspace.repo,),
                      git_permission=GitPermission.READ_WRITE,
                      sandbox=Sandbox(STATUS, True, read_only=workspace.borrowed),
                      shell_timeout_s=60,
                      tool_config={"shell_exec": {"program_level": "any_sandboxed"}})
    shell = next(t for t in create_shell() if t.spec.name == "shell_exec")
    result = await shell.execute({"command": f"sh -c '{script}; echo ran'"}, ctx)
    assert "ran" in result.content, result.content
    return result.content


ATTACKS = {
    "shared config": "git --git-dir={src}/.git config core.hooksPath /x; "
                     "echo \"[core] fsmonitor = evil\" >> {src}/.git/config",
    "hooks": "mkdir -p {src}/.git/hooks; echo evil > {src}/.git/hooks/pre-commit; "
             "chmod +x {src}/.git/hooks/pre-commit",
    "another branch": "git --git-dir={src}/.git update-ref refs/heads/other HEAD; "
                      "echo 0000 > {src}/.git/refs/heads/other",
    "the stash": "git --git-dir={src}/.git --work-tree={src} stash drop; "
                 "git --git-dir={src}/.git update-ref -d refs/stash",
    "objects through the alternates path": (
        "for f in $(find {objects} -type f); do chmod u+w $f; echo x > $f; rm -f $f; done"),
    "a push into the project": "git commit -q --allow-empty -m evil; "
                               "git push -q -f {src} HEAD:refs/heads/other; "
                               "git push -q -f {src} HEAD:refs/heads/main",
    "outside the worktree": "echo escaped > ../escaped.txt; echo escaped > {src}/a.txt; "
                            "echo escaped > {src}/new.txt; mkdir -p ../../x",
}


@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_an_attack_from_the_run_changes_nothing_of_the_persons(
        visible: Path, repo: Path, attack: str) -> None:
    before = _state(repo)
    data = visible / "data"
    workspace = await Worktrees(data).create(repo)
    around = sorted(p.name for p in workspace.repo.parent.iterdir())
    script = ATTACKS[attack].format(src=repo, objects=workspace.borrowed[0])
    await _attack(workspace, script)
    assert _state(repo) == before
    assert (repo / "a.txt").read_text() == "one\n"
    assert sorted(p.name for p in workspace.repo.parent.iterdir()) == around
    assert not (visible / "x").exists() and not (data / "worktrees" / "x").exists()
    assert _git(workspace.repo, "fsck", "--no-dangling").strip() == ""
