"""Helpers for the checkpoint engine tests: a project folder, a store, and tree fingerprints."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path

import pytest

from app.core.checkpoints import CheckpointStore

GIT_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C",
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost",
}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env=GIT_ENV, check=True,
                          capture_output=True, stdin=subprocess.DEVNULL).stdout.decode()


def fingerprint(root: Path, *, skip_git: bool = True) -> dict[str, tuple[str, str]]:
    """path -> (kind and mode bits, sha256 or link target) of everything under ``root``."""
    out: dict[str, tuple[str, str]] = {}
    for folder, dirs, files in os.walk(root):
        if skip_git and ".git" in dirs:
            dirs.remove(".git")
        for name in dirs + files:
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", "")
            else:
                out[rel] = (f"file {oct(stat.S_IMODE(st.st_mode))}",
                            hashlib.sha256(path.read_bytes()).hexdigest())
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def store(tmp_path: Path, project: Path) -> CheckpointStore:
    return CheckpointStore(tmp_path / "data", project)
