"""In auto mode, nothing the person's git runs can be changed without their approval, proved
through the real loop by side effects: the file tools' writes ask (and are declined), and the
sandboxed commands that run unasked find every such file read-only. Targets: a nested
repository's config and hooks, a submodule's ``.git`` file and ``.git/modules/*`` config, a
linked worktree's ``commondir``, the ``core.hooksPath`` folder (husky) and an ``include.path``
file.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from app.core.agent.checkpointing import Checkpointer
from app.core.agent.events import ToolFinished
from app.core.permission_mode import PermissionMode
from tests.fakes.anthropic_server import Response, tool
from tests.sandbox_support import requires_sandbox
from tests.unit.agent.helpers import Harness

pytestmark = requires_sandbox

TARGETS = ["vendor/lib/.git/config", "vendor/lib/.git/hooks/pre-commit", "sub/.git",
           ".git/modules/sub/config", ".git/worktrees/wt/commondir", ".husky/_/pre-commit",
           "team.gitconfig"]


def _git(folder: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)


@pytest.fixture
def project(project_outside_tmp: Path) -> Path:
    root = project_outside_tmp
    for repo in (root, root / "vendor" / "lib"):
        repo.mkdir(parents=True, exist_ok=True)
        _git(repo, "init", "-q")
        (repo / "a.txt").write_text("one\n")
        _git(repo, "add", "a.txt")
        _git(repo, "commit", "-qm", "first")
    (root / "vendor" / "lib" / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    module = root / ".git" / "modules" / "sub"
    _git(root, "init", "-q", "--bare", str(module))
    (root / "sub").mkdir()
    (root / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    _git(root, "worktree", "add", "-q", str(root.parent / "wt"))
    (root / ".husky" / "_").mkdir(parents=True)
    (root / ".husky" / "_" / "pre-commit").write_text("#!/bin/sh\n")
    _git(root, "config", "core.hooksPath", ".husky/_")
    (root / "team.gitconfig").write_text("[user]\n\tname = T\n")
    _git(root, "config", "include.path", "../team.gitconfig")
    return root


def contents(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in TARGETS}


async def test_file_tool_writes_to_what_git_runs_ask_in_auto_mode(
        harness: Harness, fresh_data_dir: Path) -> None:
    project = harness.project
    before = contents(project)
    harness.update_profile(permission_mode=PermissionMode.AUTO)
    harness.enable("write_file", allowed_write_dirs=["."])
    planted = "[core]\n\tfsmonitor = touch /var/tmp/planted\n"
    harness.server.script(
        *(Response.tools(tool("write_file", {"path": rel, "content": planted}, id=f"t{n}"))
          for n, rel in enumerate(TARGETS)),
        Response.text("Done."))
    # no answers queued: every approval request is declined
    await harness.session(checkpointer=Checkpointer(fresh_data_dir, project)).run("plant")
    assert sorted(r.tool_use_id for r in harness.approver.requests) == sorted(
        f"t{n}" for n in range(len(TARGETS)))
    assert contents(project) == before


async def test_unasked_commands_find_what_git_runs_read_only(
        harness: Harness, fresh_data_dir: Path) -> None:
    project = harness.project
    before = contents(project)
    harness.update_profile(permission_mode=PermissionMode.AUTO)
    harness.enable("shell_exec", allowed_commands=["sh"], allowed_write_dirs=["."])
    append = "; ".join(f"echo planted >> {rel}" for rel in TARGETS)
    harness.server.script(
        Response.tools(tool("shell_exec", {"command": f"sh -c '{append}; echo ok > b.txt'"},
                            id="t1")),
        Response.text("Done."))
    await harness.session(checkpointer=Checkpointer(fresh_data_dir, project)).run("plant")
    assert harness.approver.requests == []  # it ran unasked (contained and reversible)
    assert (project / "b.txt").read_text() == "ok\n", harness.of(ToolFinished)[0].content
    assert contents(project) == before
