"""A FIFO where the file tools read an ignore file never makes them hang (the FIFO is skipped).

On the old code each of these blocked forever in ``open()`` of the FIFO; ``runs_within`` turns
that into a failure, and ``make_fifo`` frees the stuck thread at teardown.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.tools.base import ToolContext
from app.core.tools.builtin import glob_search, grep_search, list_directory
from tests.fifo_support import runs_within

IGNORE_FILES = [".gitignore", ".ignore", ".rgignore"]


@pytest.fixture(params=IGNORE_FILES)
def fifo_project(request: pytest.FixtureRequest, project: Path,
                 make_fifo: Callable[[Path], Path]) -> Path:
    (project / "src").mkdir()
    (project / "src" / "main.py").write_text("print('needle')\n")
    make_fifo(project / request.param)
    make_fifo(project / "src" / request.param)  # and one in a subfolder the walk enters
    return project


def test_list_directory_skips_a_fifo_ignore_file(fifo_project: Path) -> None:
    r = runs_within(lambda: list_directory.create().execute(
        {"include_hidden": True}, ToolContext(project_root=fifo_project)))
    assert not r.is_error, r.content
    assert "main.py" in r.content


def test_glob_search_skips_a_fifo_ignore_file(fifo_project: Path) -> None:
    r = runs_within(lambda: glob_search.create().execute(
        {"pattern": "**/*.py"}, ToolContext(project_root=fifo_project)))
    assert not r.is_error, r.content
    assert "src/main.py" in r.content


def test_grep_search_python_backend_skips_a_fifo_ignore_file(fifo_project: Path) -> None:
    ctx = ToolContext(project_root=fifo_project,
                      tool_config={"grep_search": {"use_rg": False}})
    r = runs_within(lambda: grep_search.create().execute({"pattern": "needle"}, ctx))
    assert not r.is_error, r.content
    assert "main.py" in r.content


def test_an_ignore_file_above_the_project_that_is_a_fifo(
        tmp_path: Path, make_fifo: Callable[[Path], Path]) -> None:
    project = tmp_path / "outer" / "project"
    project.mkdir(parents=True)
    (project / "a.py").write_text("x = 1\n")
    make_fifo(tmp_path / "outer" / ".gitignore")
    r = runs_within(lambda: glob_search.create().execute({"pattern": "*.py"},
                                                          ToolContext(project_root=project)))
    assert not r.is_error, r.content
    assert "a.py" in r.content


def test_ripgrep_in_the_sandbox_does_not_hang_on_a_fifo_gitignore(visible: Path) -> None:
    # The sandbox shows a project's special files as /dev/null: a FIFO named .gitignore
    # reads as empty there instead of blocking ripgrep (or git) until the call times out.
    from tests.sandbox_support import STATUS

    if shutil.which("rg") is None or not STATUS.available:
        pytest.skip("needs ripgrep and the sandbox")
    project = visible / "p"
    project.mkdir()
    os.mkfifo(project / ".gitignore")
    (project / "a.py").write_text("needle = 1\n")
    ctx = ToolContext(project_root=project, tool_config={"grep_search": {"use_rg": True}},
                      shell_timeout_s=20)
    started = time.monotonic()
    result = asyncio.run(asyncio.wait_for(
        grep_search.create().execute({"pattern": "needle"}, ctx), 15))
    assert "a.py:1" in result.content and time.monotonic() - started < 10
