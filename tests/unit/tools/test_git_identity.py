"""The app's own commits work on a machine with no git identity (a fallback one), and an identity
the person set wins over it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from app.core.tools.git_config.global_config import (
    FALLBACK_EMAIL,
    FALLBACK_NAME,
    controlled_global,
)

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git missing")


def _get(config: str, key: str) -> str:
    return subprocess.run([GIT or "git", "config", "--file", config, key], capture_output=True,
                          text=True, check=True).stdout.strip()


async def test_no_identity_gets_the_fallback(tmp_path: Path) -> None:
    home = tmp_path / "empty-home"
    home.mkdir()
    config = await controlled_global(GIT or "git", {"HOME": str(home),
                                                    "PATH": os.environ["PATH"]})
    assert _get(config, "user.name") == FALLBACK_NAME
    assert _get(config, "user.email") == FALLBACK_EMAIL


async def test_the_persons_identity_wins(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Ada\n\temail = ada@example.org\n")
    config = await controlled_global(GIT or "git", {"HOME": str(home),
                                                    "PATH": os.environ["PATH"]})
    assert _get(config, "user.name") == "Ada"
    assert _get(config, "user.email") == "ada@example.org"


async def test_a_machine_with_no_git_identity_can_commit_and_checkpoint(
        visible: Path, fresh_data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No ~/.gitconfig, no XDG one, no GIT_* variables: git_ops' commit, a sandboxed shell
    `git commit` and a checkpoint of the repository all work (what `make test` needs)."""
    import json

    from app.core.agent.checkpointing import Checkpointer
    from app.core.sandbox import Sandbox
    from app.core.tools.base import GitPermission, ToolContext
    from app.core.tools.builtin.git_ops import GitOpsTool
    from app.core.tools.builtin.shell_exec import LEVEL_ANY_SANDBOXED, ShellExecTool
    from tests.sandbox_support import STATUS

    home, project = visible / "empty-home", visible / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name in [n for n in os.environ if n.startswith("GIT_")]:
        monkeypatch.delenv(name)
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run([GIT or "git", "init", "-q", "-b", "main"], cwd=project, env=env, check=True)
    (project / "a.txt").write_text("a\n")
    ctx = ToolContext(project_root=project, git_permission=GitPermission.READ_WRITE,
                      shell_timeout_s=60, sandbox=Sandbox(STATUS, STATUS.available),
                      tool_config={"shell_exec": {"program_level": LEVEL_ANY_SANDBOXED}})
    git_ops = GitOpsTool()
    for action, args in (("add", {"files": ["a.txt"]}), ("commit", {"message": "first"})):
        result = await git_ops.execute({"action": action, "args": args}, ctx)
        assert not result.is_error, result.content
    (project / "a.txt").write_text("b\n")
    shell = await ShellExecTool().execute({"command": "git commit -qam second"}, ctx)
    assert json.loads(shell.content)["exit_code"] == 0, shell.content
    log = subprocess.run([GIT or "git", "log", "--format=%s"], cwd=project, env=env,
                         check=True, capture_output=True, text=True).stdout.split()
    assert log == ["second", "first"]
    checkpoint = await Checkpointer(fresh_data_dir, project).snapshot("no identity")
    assert checkpoint is not None and checkpoint.repo is not None
