"""Git code cannot be planted for the person, proved by side effects.

With shell_exec at "any program, sandboxed", a program tries to change everything the person's
own git would run later, outside the sandbox: a nested repository's config and hooks, a
submodule's ``.git`` file and ``.git/modules/<name>/config``, a linked worktree's ``commondir``,
the ``core.hooksPath`` folder, a config file named by ``include.path``, and the project's
``.git`` itself (renamed away and replaced). Each check looks at the files afterwards, and the
last one runs the person's real ``git status`` and ``git commit`` to see that nothing planted
runs. ``git commit`` from the sandbox keeps working at the read-write level.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from app.core.sandbox import Sandbox
from app.core.sensitive_paths import sensitive_paths
from app.core.tools.base import GitPermission, ToolContext
from app.core.tools.builtin.shell_exec import LEVEL_ANY_SANDBOXED, ShellExecTool
from tests.sandbox_support import STATUS, py, requires_sandbox

pytestmark = requires_sandbox

LEVELS = [GitPermission.READ_ONLY, GitPermission.READ_WRITE]


def _git(folder: Path, *args: str, env: dict[str, str] | None = None) -> str:
    base = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=folder, env={**base, **(env or {})}, check=True,
                          capture_output=True, text=True).stdout


def _repo(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    _git(folder, "init", "-q")
    (folder / "a.txt").write_text("one\n")
    _git(folder, "add", "a.txt")
    _git(folder, "commit", "-qm", "first")
    return folder


@pytest.fixture
def home(visible: Path) -> Path:
    home = visible / "home"
    home.mkdir()
    return home


@pytest.fixture
def project(visible: Path) -> Path:
    """The project: a repository holding a nested repository, a submodule-style checkout
    (``.git`` file into ``.git/modules``), a linked worktree, husky hooks and an include."""
    root = _repo(visible / "project")
    _repo(root / "vendor" / "lib")
    (root / "vendor" / "lib" / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    module = root / ".git" / "modules" / "sub"
    _git(root, "init", "-q", "--bare", str(module))
    (root / "sub").mkdir()
    (root / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    _git(root, "config", "-f", str(module / "config"), "core.worktree", "../../../sub")
    _git(root, "worktree", "add", "-q", str(visible / "wt"))
    (root / ".husky" / "_").mkdir(parents=True)
    (root / ".husky" / "pre-commit").write_text("#!/bin/sh\necho checked\n")
    _git(root, "config", "core.hooksPath", ".husky/_")
    (root / "team.gitconfig").write_text("[user]\n\tname = T\n")
    _git(root, "config", "include.path", "../team.gitconfig")
    return root


def _ctx(project: Path, home: Path, git: GitPermission) -> ToolContext:
    assert STATUS.available, STATUS.reason
    sandbox = Sandbox(STATUS, True, sensitive_paths(home=home))
    return ToolContext(project_root=project, sandbox=sandbox, git_permission=git,
                       shell_timeout_s=60,
                       tool_config={"shell_exec": {"program_level": LEVEL_ANY_SANDBOXED}})


def _run(ctx: ToolContext, command: str) -> dict[str, object]:
    result = asyncio.run(ShellExecTool().execute({"command": command}, ctx))
    payload = json.loads(result.content)
    assert payload["sandboxed"] is True
    return payload


def _append(path: Path, text: str) -> str:
    """A program that appends ``text`` to ``path`` (exit code 1 when it cannot)."""
    return py(f"open({str(path)!r}, 'a').write({text!r})")


def _snapshot(*paths: Path) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for path in paths:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            out[str(file)] = file.read_bytes() if file.exists() else None
    return out


FSMONITOR = "\n[core]\n\tfsmonitor = touch /var/tmp/planted\n"


@pytest.mark.parametrize("git", LEVELS)
def test_a_nested_repositorys_config_and_hooks_cannot_be_changed(project: Path, home: Path,
                                                                 git: GitPermission) -> None:
    nested = project / "vendor" / "lib" / ".git"
    before = _snapshot(nested / "config", nested / "hooks")
    ctx = _ctx(project, home, git)
    assert _run(ctx, _append(nested / "config", FSMONITOR))["exit_code"] != 0
    assert _run(ctx, _append(nested / "hooks" / "pre-commit", "touch /var/tmp/x\n"))[
        "exit_code"] != 0
    assert _run(ctx, _append(nested / "hooks" / "post-checkout", "touch /var/tmp/x\n"))[
        "exit_code"] != 0
    _run(ctx, f"mv {nested} {nested}.old")  # a mount point cannot be moved away
    assert _snapshot(nested / "config", nested / "hooks") == before
    assert not (nested.parent / ".git.old").exists()


@pytest.mark.parametrize("git", LEVELS)
def test_a_submodules_git_file_and_module_config_cannot_be_changed(project: Path, home: Path,
                                                                  git: GitPermission) -> None:
    pointer = project / "sub" / ".git"
    module_config = project / ".git" / "modules" / "sub" / "config"
    before = _snapshot(pointer, module_config)
    ctx = _ctx(project, home, git)
    planted = project / "planted-gitdir"
    _run(ctx, py(f"open({str(pointer)!r}, 'w').write('gitdir: {planted}\\n')"))
    _run(ctx, _append(module_config, FSMONITOR))
    _run(ctx, f"rm -f {pointer}")
    assert _snapshot(pointer, module_config) == before


@pytest.mark.parametrize("git", LEVELS)
def test_a_linked_worktrees_commondir_cannot_be_changed(project: Path, home: Path,
                                                        visible: Path, git: GitPermission,
                                                        ) -> None:
    worktree = project / ".git" / "worktrees" / "wt"
    assert (worktree / "commondir").is_file()
    before = _snapshot(worktree)
    ctx = _ctx(project, home, git)
    _run(ctx, py(f"open({str(worktree / 'commondir')!r}, 'w').write({str(visible)!r})"))
    _run(ctx, _append(worktree / "config.worktree", FSMONITOR))
    assert _snapshot(worktree) == before


@pytest.mark.parametrize("git", LEVELS)
def test_the_hooks_path_folder_cannot_be_changed(project: Path, home: Path,
                                                 git: GitPermission) -> None:
    husky = project / ".husky"
    before = _snapshot(husky)
    ctx = _ctx(project, home, git)
    _run(ctx, _append(husky / "pre-commit", "touch /var/tmp/planted\n"))
    _run(ctx, py(f"open({str(husky / '_' / 'pre-commit')!r}, 'w').write('#!/bin/sh\\n')"))
    _run(ctx, py(f"open({str(husky / 'post-checkout')!r}, 'w').write('#!/bin/sh\\n')"))
    assert _snapshot(husky) == before


@pytest.mark.parametrize("git", LEVELS)
def test_an_included_config_cannot_be_changed(project: Path, home: Path,
                                              git: GitPermission) -> None:
    included = project / "team.gitconfig"
    before = included.read_bytes()
    out = _run(_ctx(project, home, git), _append(included, FSMONITOR))
    assert out["exit_code"] != 0
    assert included.read_bytes() == before


def test_the_projects_git_folder_cannot_be_swapped_at_the_read_write_level(
        project: Path, home: Path) -> None:
    head = _git(project, "rev-parse", "HEAD")
    config = (project / ".git" / "config").read_bytes()
    swap = ("import os, shutil; os.rename('.git', '.git-old'); "
            "shutil.copytree('.git-old', '.git', ignore=shutil.ignore_patterns('config')); "
            "open('.git/config', 'w').write('[core]\\n\\tfsmonitor = touch /var/tmp/x\\n')")
    _run(_ctx(project, home, GitPermission.READ_WRITE), py(swap))
    assert not (project / ".git-old").exists()
    assert (project / ".git" / "config").read_bytes() == config
    assert _git(project, "rev-parse", "HEAD") == head


def test_git_commit_still_works_at_the_read_write_level(project: Path, home: Path) -> None:
    (project / "a.txt").write_text("two\n")
    commit = _run(_ctx(project, home, GitPermission.READ_WRITE),
                  "git -c user.email=t@example.com -c user.name=T commit -qam second")
    assert commit["exit_code"] == 0, commit
    assert "second" in _git(project, "log", "--oneline")


def test_the_persons_git_runs_nothing_planted(project: Path, home: Path, outside: Path) -> None:
    """Every plant at once, at the read-write level; then the person's own git (hooks on,
    no sandbox) runs status and commit in the project and the nested repository."""
    marker = outside / "ran"
    plant = f"#!/bin/sh\necho planted >> {marker}\n"
    monitor = f"\n[core]\n\tfsmonitor = echo planted >> {marker}; false\n"
    targets = [project / ".git" / "hooks" / "pre-commit", project / ".husky" / "pre-commit",
               project / ".husky" / "_" / "pre-commit",
               project / "vendor" / "lib" / ".git" / "hooks" / "pre-commit"]
    ctx = _ctx(project, home, GitPermission.READ_WRITE)
    for target in targets:
        _run(ctx, py(f"import os; p={str(target)!r}; open(p, 'w').write({plant!r}); "
                     "os.chmod(p, 0o755)"))
    for config in (project / ".git" / "config", project / "team.gitconfig",
                   project / "vendor" / "lib" / ".git" / "config"):
        _run(ctx, _append(config, monitor))
    for repo in (project, project / "vendor" / "lib"):
        _git(repo, "status")
        (repo / "a.txt").write_text("changed\n")
        _git(repo, "commit", "-qam", "by the person")
    assert not marker.exists(), marker.read_text()
