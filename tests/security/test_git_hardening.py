"""A repository's own configuration must not run programs through git_ops or shell_exec's git.

The fixture repository is hostile: every program-running setting we know of points at a script
that records its invocation in a marker file. A positive control proves the setup really runs
the script with plain git, so these tests can fail.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from app.core.tools.base import GitPermission, ToolContext
from app.core.tools.builtin.git_ops import GitOpsTool
from app.core.tools.builtin.shell_exec import ShellExecTool

BASE_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
            "HOME": "/nonexistent", "PATH": "/usr/local/bin:/usr/bin:/bin"}


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, env=BASE_ENV, check=check,
                          capture_output=True, text=True)


@pytest.fixture
def hostile(project: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(repo, marker): a repository whose config tries to run `evil` on every occasion."""
    marker = tmp_path / "marker"
    evil = tmp_path / "evil.sh"
    evil.write_text(f'#!/bin/sh\necho "$0 $*" >> "{marker}"\ncat\n')
    evil.chmod(evil.stat().st_mode | stat.S_IXUSR)
    repo = project
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    (repo / "a.txt").write_text("one\n")
    (repo / "doc.bin").write_text("binary-ish\n")
    git(repo, "add", "a.txt", "doc.bin")
    git(repo, "commit", "-q", "-m", "first")
    (repo / "a.txt").write_text("one\ntwo\n")
    git(repo, "commit", "-q", "-am", "second")
    (repo / "a.txt").write_text("one\ntwo\nthree\n")  # a dirty work tree for status/diff

    e = str(evil)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "commit-msg", "post-commit", "post-checkout", "prepare-commit-msg",
                 "pre-auto-gc", "reference-transaction", "post-index-change"):
        for folder in (hooks, repo / ".git" / "hooks"):
            path = folder / hook
            path.write_text(f'#!/bin/sh\necho "hook {hook}" >> "{marker}"\n')
            path.chmod(0o755)
    included = tmp_path / "included.config"
    included.write_text(f"[filter \"inc\"]\n\tclean = {e}\n\tsmudge = {e}\n")
    settings = {
        "core.fsmonitor": e, "core.pager": e, "core.editor": e, "sequence.editor": e,
        "core.sshCommand": e, "core.askPass": e, "core.hooksPath": str(hooks),
        "pager.status": e, "pager.diff": e, "pager.log": e, "pager.show": e, "pager.branch": e,
        "diff.external": e, "diff.evil.textconv": e, "diff.evil.command": e,
        "filter.evil.clean": e, "filter.evil.smudge": e, "filter.evil.process": e,
        "filter.evil.required": "true",
        "merge.evil.driver": e, "credential.helper": f"!{e}", "gpg.program": e,
        "commit.gpgSign": "true", "log.showSignature": "true", "tag.gpgSign": "true",
        "alias.status": f"!{e}", "alias.st": f"!{e}", "interactive.diffFilter": e,
        "remote.origin.url": "ext::sh -c evil", "remote.origin.uploadpack": e,
        "include.path": str(included), "core.alternateRefsCommand": e,
        "trailer.sign.command": e,
    }
    for key, value in settings.items():
        git(repo, "config", key, value)
    (repo / ".gitattributes").write_text("*.txt diff=evil filter=evil\n*.bin filter=inc\n")
    # .gitattributes itself is committed as an attacker would ship it
    return repo, marker


def fired(marker: Path) -> str:
    return marker.read_text() if marker.exists() else ""


def test_positive_control_plain_git_runs_the_script(hostile: tuple[Path, Path]) -> None:
    repo, marker = hostile
    git(repo, "status", check=False)
    git(repo, "diff", check=False)
    assert fired(marker), "the hostile fixture no longer triggers plain git; fix the fixture"


READS = [
    ("status", {}),
    ("diff", {}),
    ("diff", {"staged": True}),
    ("diff", {"ref": "HEAD~1"}),
    ("diff", {"files": ["a.txt"]}),
    ("log", {}),
    ("log", {"max_count": 2, "files": ["a.txt"]}),
    ("show", {}),
    ("show", {"ref": "HEAD~1"}),
    ("branch_list", {}),
]


@pytest.mark.parametrize(("action", "args"), READS)
async def test_read_actions_run_nothing(hostile: tuple[Path, Path], action: str,
                                        args: dict) -> None:
    repo, marker = hostile
    ctx = ToolContext(working_dir=repo, git_permission=GitPermission.READ_ONLY)
    result = await GitOpsTool().execute({"action": action, "args": args}, ctx)
    assert not result.is_error, result.content
    assert fired(marker) == ""


async def test_read_output_is_real(hostile: tuple[Path, Path]) -> None:
    repo, _ = hostile
    ctx = ToolContext(working_dir=repo)
    diff = json.loads((await GitOpsTool().execute({"action": "diff"}, ctx)).content)["output"]
    assert "+three" in diff


async def test_write_actions_run_no_hooks_or_drivers(hostile: tuple[Path, Path]) -> None:
    repo, marker = hostile
    ctx = ToolContext(working_dir=repo, git_permission=GitPermission.READ_WRITE)
    tool = GitOpsTool()
    (repo / "b.txt").write_text("b\n")
    for action, args in [("add", {"files": ["a.txt", "b.txt", ".gitattributes"]}),
                         ("commit", {"message": "third"}),
                         ("branch_create", {"branch_name": "topic"}),
                         ("checkout", {"branch_name": "main"})]:
        result = await tool.execute({"action": action, "args": args}, ctx)
        assert not result.is_error, (action, result.content)
    assert fired(marker) == ""
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "third"


async def test_hooks_run_when_configured(hostile: tuple[Path, Path]) -> None:
    repo, marker = hostile
    ctx = ToolContext(working_dir=repo, git_permission=GitPermission.READ_WRITE,
                      tool_config={"git_ops": {"run_hooks": True}})
    (repo / "c.txt").write_text("c\n")
    await GitOpsTool().execute({"action": "add", "args": {"files": ["c.txt"]}}, ctx)
    await GitOpsTool().execute({"action": "commit", "args": {"message": "with hooks"}}, ctx)
    assert "hook pre-commit" in fired(marker)


SHELL_GIT = [
    "git status",
    "git diff",
    "git diff HEAD~1",
    "git log -p -2",
    "git show",
    "git show --stat HEAD~1",
    "git branch -a",
    "git --no-pager log --oneline",
    "git blame a.txt",
    "git grep one",
    "git ls-files",
    "git diff --cached",
]


@pytest.mark.parametrize("command", SHELL_GIT)
async def test_shell_exec_git_runs_nothing(hostile: tuple[Path, Path], command: str) -> None:
    repo, marker = hostile
    ctx = ToolContext(working_dir=repo, allowed_commands=("git",))
    result = await ShellExecTool().execute({"command": command}, ctx)
    assert not result.is_error, result.content
    assert fired(marker) == "", (command, json.loads(result.content))


@pytest.mark.parametrize("command", ["git st", "git -c core.pager=sh log", "git difftool",
                                     "git -p log", "git config core.fsmonitor x",
                                     "git log --ext-diff -p", "git diff --textconv",
                                     "git fetch --upload-pack=x origin", "git push origin main",
                                     "git grep -O one", "git --exec-path=/tmp status"])
async def test_shell_exec_git_escapes_refused(hostile: tuple[Path, Path], command: str) -> None:
    repo, marker = hostile
    ctx = ToolContext(working_dir=repo, allowed_commands=("git",))
    result = await ShellExecTool().execute({"command": command}, ctx)
    assert result.is_error
    assert fired(marker) == ""


async def test_ref_injection_output_option(hostile: tuple[Path, Path], tmp_path: Path) -> None:
    repo, _ = hostile
    target = tmp_path / "written-by-git"
    ctx = ToolContext(working_dir=repo, git_permission=GitPermission.READ_WRITE)
    for action in ("show", "diff", "log"):
        result = await GitOpsTool().execute({"action": action,
                                             "args": {"ref": f"--output={target}"}}, ctx)
        assert result.is_error
    assert not target.exists()


async def test_branch_name_injection(hostile: tuple[Path, Path]) -> None:
    repo, _ = hostile
    ctx = ToolContext(working_dir=repo, git_permission=GitPermission.READ_WRITE)
    before = git(repo, "rev-parse", "HEAD").stdout
    for name in ("--orphan", "--orphan=x", "-f", "--detach", "--force"):
        for action in ("branch_create", "checkout"):
            result = await GitOpsTool().execute({"action": action,
                                                 "args": {"branch_name": name}}, ctx)
            assert result.is_error, (action, name)
    assert git(repo, "rev-parse", "HEAD").stdout == before
    assert git(repo, "branch", "--show-current").stdout.strip() == "main"
    assert os.path.exists(repo / "a.txt")
