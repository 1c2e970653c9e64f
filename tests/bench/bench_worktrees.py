"""Benchmark creating a run workspace (app.core.worktrees) against ``git worktree add``.

Run: ``.venv/bin/python tests/bench/bench_worktrees.py``. Generates a deterministic project of
10,000 small files in a real git repository, then times ``git worktree add`` of a new branch
(the baseline, measured in the same run) and ``Worktrees.create`` (a shared clone, its own
branch checked out), each the median of a few runs, and prints ``name: value`` lines. Goal:
``worktree_create_vs_git_worktree_add`` ≤ 2.0.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.core.worktrees.workspace import Worktrees

FILES = int(os.environ.get("BENCH_WORKTREE_FILES", "10000"))
RUNS = int(os.environ.get("BENCH_WORKTREE_RUNS", "5"))
GIT_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C",
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=GIT_ENV, check=True, capture_output=True,
                   stdin=subprocess.DEVNULL)


def generate(root: Path) -> None:
    rng = random.Random(20261128)
    for n in range(FILES):
        folder = root / f"pkg{n % 50}" / f"mod{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}.py").write_text("\n".join(
            f"value_{i} = {rng.randrange(10**9)}" for i in range(20)) + "\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "bench")


def main() -> None:
    place = Path(tempfile.mkdtemp(prefix="tebiki-bench-worktree-", dir="/var/tmp"))
    try:
        project = place / "project"
        project.mkdir()
        generate(project)
        baseline, ours = [], []
        for n in range(RUNS):
            started = time.perf_counter()
            git(project, "worktree", "add", "-q", "-b", f"bench-{n}", str(place / f"wt{n}"))
            baseline.append(time.perf_counter() - started)
            worktrees = Worktrees(place / f"data{n}")
            started = time.perf_counter()
            asyncio.run(worktrees.create(project))
            ours.append(time.perf_counter() - started)
        base, mine = statistics.median(baseline), statistics.median(ours)
        print(f"git_worktree_add_ms: {base * 1000:.1f}")
        print(f"worktree_create_ms: {mine * 1000:.1f}")
        print(f"worktree_create_vs_git_worktree_add: {mine / base:.2f}")
    finally:
        shutil.rmtree(place, ignore_errors=True)


if __name__ == "__main__":
    main()
