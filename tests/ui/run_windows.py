"""The real window for the parallel-runs tests: write_file allowed under doc/ (asked), and
closing it at the end stops every run without asking; a git project for worktree runs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from app.core.services import Services
from app.core.store.profiles import ToolSetting
from app.ui.main_window import MainWindow


def run_window(qtbot, services: Services, project: Path) -> MainWindow:
    profile = services.profiles.ensure_default()
    assert profile.id is not None
    services.profiles.set_tool(profile.id, ToolSetting("write_file", True,
                                                   {"allowed_write_dirs": ["doc"]}))
    window = MainWindow(services=services, project_root=project)
    qtbot.addWidget(window)
    window.parallel_runs.confirm_quit = lambda _question: True
    window.show()
    qtbot.waitExposed(window)
    return window


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout


def git_project(folder: Path, files: dict[str, str]) -> Path:
    """``folder``/project, a repository on ``main`` with ``files`` in its first commit."""
    root = folder / "project"
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Person")
    git(root, "config", "user.email", "person@example.org")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root
