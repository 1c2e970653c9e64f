"""The host never blocks on project content: a FIFO where the sandbox plan, the
toolchain detection, git_metadata or a checkpoint reads ``.git``, ``commondir``, ``gitdir``,
``HEAD``, a ref, the index or ``pyvenv.cfg`` is passed over, never waited on; a FIFO the person
attaches is refused at once.

On the old code each of the git and venv readers blocked forever in ``open()``;
``returns_within`` turns that into a failure, and ``make_fifo`` frees the stuck thread at
teardown.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.checkpoints.repo_state import RepoStateRecorder
from app.core.sandbox.mounts import worktree_git_dirs
from app.core.sandbox.toolchains import venv_bases
from app.core.tools.git_metadata import git_metadata
from tests.fifo_support import returns_within

MakeFifo = Callable[[Path], Path]


def _git(folder: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)


def test_a_fifo_dot_git_does_not_block_the_sandbox_plan(project: Path,
                                                        make_fifo: MakeFifo) -> None:
    make_fifo(project / ".git")
    assert returns_within(lambda: worktree_git_dirs(project)) == []


def test_a_fifo_commondir_does_not_block_the_sandbox_plan(project: Path, tmp_path: Path,
                                                          make_fifo: MakeFifo) -> None:
    gitdir = tmp_path / "repo-git"
    gitdir.mkdir()
    make_fifo(gitdir / "commondir")
    (project / ".git").write_text(f"gitdir: {gitdir}\n")
    assert returns_within(lambda: worktree_git_dirs(project)) == [gitdir.resolve()]


def test_a_fifo_pyvenv_cfg_does_not_block_the_toolchain_detection(
        project: Path, make_fifo: MakeFifo) -> None:
    (project / ".venv").mkdir()
    make_fifo(project / ".venv" / "pyvenv.cfg")
    assert returns_within(lambda: venv_bases(project)) == ()


def test_a_fifo_gitdir_file_does_not_block_git_metadata(project: Path,
                                                        make_fifo: MakeFifo) -> None:
    module = project / ".git" / "modules" / "sub"
    _git(project, "init", "-q")
    _git(project, "init", "-q", "--bare", str(module))
    (project / "sub").mkdir()
    (project / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    make_fifo(module / "gitdir")
    metadata = returns_within(lambda: git_metadata([project]))
    assert metadata.protecting(module / "config") is not None


@pytest.mark.parametrize("name", ["HEAD", "refs/heads/main", "index", "packed-refs"])
def test_a_fifo_in_the_repository_does_not_block_a_checkpoint(
        project: Path, tmp_path: Path, make_fifo: MakeFifo, name: str) -> None:
    _git(project, "init", "-q", "-b", "main")
    target = project / ".git" / name
    target.unlink(missing_ok=True)
    make_fifo(target)
    objects = tmp_path / "objects"
    objects.mkdir()
    # not recorded (a checkpoint without the repository's state): never waited on
    assert returns_within(lambda: RepoStateRecorder(project, objects).record()) is None


def test_a_fifo_attachment_is_refused_at_once(tmp_path: Path, make_fifo: MakeFifo) -> None:
    from app.core.agent.attachments import AttachmentError, read_attachment

    fifo = make_fifo(tmp_path / "notes.txt")

    def attach() -> str:
        try:
            read_attachment(fifo)
        except AttachmentError as exc:
            return str(exc)
        return "attached"

    assert returns_within(attach) == "notes.txt: not a file"
