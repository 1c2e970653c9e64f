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
