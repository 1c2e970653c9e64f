"""The other program-running tools in the real sandbox: grep_search's ripgrep and git_ops give
the same answers as unsandboxed, and hidden folders stay hidden from ripgrep."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from app.core.sandbox import Sandbox, SandboxStatus
from app.core.sensitive_paths import sensitive_paths
from app.core.tools.base import GitPermission, ToolContext
from app.core.tools.builtin.git_ops import GitOpsTool
from app.core.tools.builtin.grep_search import GrepSearchTool
from tests.sandbox_support import STATUS, requires_sandbox

pytestmark = requires_sandbox
RG = shutil.which("rg")


@pytest.fixture
def home():
    folder = Path(tempfile.mkdtemp(prefix="tebiki-home-", dir="/var/tmp")).resolve()
    (folder / ".ssh").mkdir()
    # Not a secret's file name (grep never searches those): the folder is what is hidden.
    (folder / ".ssh" / "config").write_text("PRIVATE-KEY-MARKER\n")
    (folder / "notes.txt").write_text("PRIVATE-KEY-MARKER is not here\n")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _sandbox(home: Path) -> Sandbox:
    assert STATUS.available, STATUS.reason
    return Sandbox(STATUS, True, sensitive_paths(home=home))


@pytest.mark.skipif(RG is None, reason="ripgrep is not installed")
def test_ripgrep_in_the_sandbox_does_not_see_hidden_folders(home: Path) -> None:
    args = {"pattern": "PRIVATE-KEY-MARKER", "path": str(home), "output_mode": "content"}
    config = {"grep_search": {"use_rg": True}}
    plain = ToolContext(project_root=home, tool_config=config)
    boxed = ToolContext(project_root=home, tool_config=config, sandbox=_sandbox(home))
    seen = asyncio.run(GrepSearchTool().execute({**args, "path": "."}, plain)).content
    hidden = asyncio.run(GrepSearchTool().execute({**args, "path": "."}, boxed)).content
    assert ".ssh/config" in seen  # the baseline: unsandboxed ripgrep reads it
    assert ".ssh/config" not in hidden and "notes.txt" in hidden


@pytest.mark.skipif(RG is None, reason="ripgrep is not installed")
def test_ripgrep_results_are_the_same_in_the_sandbox(project: Path) -> None:
    (project / "src").mkdir()
    (project / "src" / "a.py").write_text("def main():\n    return 1\n")
    (project / "b.txt").write_text("main line\n")
    args = {"pattern": "main", "output_mode": "content"}
    config = {"grep_search": {"use_rg": True}}
    plain = asyncio.run(GrepSearchTool().execute(args, ToolContext(
        project_root=project, tool_config=config)))
    boxed = asyncio.run(GrepSearchTool().execute(args, ToolContext(
        project_root=project, tool_config=config, sandbox=Sandbox(STATUS, True))))
    assert plain == boxed and not boxed.is_error


def test_required_sandbox_missing_searches_in_python(project: Path) -> None:
    (project / "a.txt").write_text("needle\n")
    ctx = ToolContext(project_root=project, tool_config={"grep_search": {"use_rg": True}},
                      sandbox=Sandbox(SandboxStatus.unavailable("none"), True))
    result = asyncio.run(GrepSearchTool().execute({"pattern": "needle"}, ctx))
    assert not result.is_error and "a.txt" in result.content


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout


def test_git_ops_reads_and_commits_in_the_sandbox(project: Path, home: Path) -> None:
    _git(project, "init", "-q")
    (project / "a.txt").write_text("one\n")
    _git(project, "add", "a.txt")
    _git(project, "-c", "user.email=t@e", "-c", "user.name=T", "commit", "-qm", "first")
    (project / "a.txt").write_text("two\n")
    ctx = ToolContext(project_root=project, git_permission=GitPermission.READ_WRITE,
                      sandbox=_sandbox(home))
    tool = GitOpsTool()
    status = asyncio.run(tool.execute({"action": "status"}, ctx))
    assert "a.txt" in status.content, status.content
    asyncio.run(tool.execute({"action": "add", "args": {"files": ["a.txt"]}}, ctx))
    commit = asyncio.run(tool.execute({"action": "commit", "args": {"message": "second"}}, ctx))
    assert not commit.is_error, commit.content
    assert "second" in _git(project, "log", "--oneline")
    assert json.loads(status.content)["success"] is True


def test_git_ops_refuses_without_the_required_sandbox(project: Path) -> None:
    _git(project, "init", "-q")
    ctx = ToolContext(project_root=project, sandbox=Sandbox(SandboxStatus.unavailable("none"),
                                                           True))
    result = asyncio.run(GitOpsTool().execute({"action": "status"}, ctx))
    assert result.is_error and "not run" in result.content
