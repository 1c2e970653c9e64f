"""The cost per call of the protected git set (``git_metadata``) on a 10,000-file project.

Run: ``.venv/bin/python tests/bench/bench_git_metadata.py``. Builds a repository with 10,000
files in 1,110 folders (three levels of 10, 100 and 1,000 folders, 9 files in each leaf and a
few at the top), a nested repository and a hooksPath folder, ages every mtime so the result
may be cached, and prints ``name: value`` lines: the first (cold) derivation, which walks the
tree and parses the configs, and the median of the cached one every call pays, plus
``command_confinement``'s whole share (the protected paths for the sandbox) per call.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.core.tools import git_metadata as metadata_module
from app.core.tools import project_tree
from app.core.tools.base import GitPermission
from app.core.tools.command_sandbox import protected_git_paths
from app.core.tools.git_metadata import git_metadata

FILES = 10_000
RUNS = 200
OLD = 1_000_000_000


def _git(folder: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)


def build(root: Path) -> int:
    _git(root, "init", "-q")
    _git(root, "config", "core.hooksPath", ".husky/_")
    (root / ".husky" / "_").mkdir(parents=True)
    made = 0
    for a in range(10):
        for b in range(10):
            for c in range(10):
                leaf = root / f"pkg{a}" / f"mod{b}" / f"part{c}"
                leaf.mkdir(parents=True)
                for n in range(9):
                    (leaf / f"file{n}.py").write_text("x = 1\n")
                    made += 1
    while made < FILES:
        (root / f"top{made}.txt").write_text("")
        made += 1
    (root / "pkg0" / "vendored").mkdir()
    _git(root / "pkg0" / "vendored", "init", "-q")
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.utime(Path(folder, name), (OLD, OLD), follow_symlinks=False)
    os.utime(root, (OLD, OLD))
    return made


def timed(fn: object, runs: int) -> float:
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="tebiki-bench-git-", dir="/var/tmp")).resolve()
    try:
        files = build(root)
        folders = sum(1 for _ in os.walk(root)) - sum(1 for _ in os.walk(root / ".git"))
        project_tree._cache.clear()
        metadata_module._cache.clear()
        began = time.perf_counter()
        found = git_metadata([root])
        cold = time.perf_counter() - began
        assert root / "pkg0" / "vendored" / ".git" in found.nested, found
        assert git_metadata([root]) is found, "not cached: an mtime is too recent"
        warm = timed(lambda: git_metadata([root]), RUNS)
        confine = timed(lambda: protected_git_paths([root], GitPermission.READ_WRITE), RUNS)
        print(f"files: {files}")
        print(f"folders_walked: {folders}")
        print(f"cold_ms: {cold * 1000:.1f}")
        print(f"cached_per_call_ms: {warm * 1000:.2f}")
        print(f"protected_git_paths_per_call_ms: {confine * 1000:.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
