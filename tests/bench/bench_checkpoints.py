"""Benchmark the checkpoint engine against plain ``git status`` on the same tree.

Run: ``.venv/bin/python tests/bench/bench_checkpoints.py``. Generates a deterministic project of
10,000 files totalling 200 MB in a temp dir (a real git repository with everything committed,
so ``git status`` there is the baseline, measured in the same run), then times the first
checkpoint (``checkpoint_first_s``; ``checkpoint_first_nongit_s`` is the same tree in a fresh
store with the project's ``.git`` moved away), incremental checkpoints after changing 5 files
(``checkpoint_incremental_legacy_ms``: the same, in a store made to snapshot as before it
recorded the project repository's HEAD/refs/index, listed ignored entries and scanned for rule
files git would block on; the new one with a run's frozen ignore rules; goal
``incremental_vs_legacy`` ≤ 1.2×), the same after a call edited ``.gitignore`` (the frozen
rules then go through ``git ls-files``: ``checkpoint_incremental_rules_edited_ms``),
a restore of those 5 files, and prints ``name: value`` lines. Goals: first checkpoint ≤ 2 s
(either), incremental ≤ 100 ms and ≤ 2× ``git status``.

Then the GUI's side: a Qt event loop (offscreen, through qasync, as the app runs) with a 5 ms
heartbeat timer while ``Checkpointer.snapshot`` records the same tree into a fresh store — the
first checkpoint of all 10,000 files, then an incremental one — and prints the longest gap
between heartbeats beyond the 5 ms interval as ``checkpoint_gui_max_stall_ms`` (first
checkpoint) and ``checkpoint_gui_max_stall_incremental_ms``. Goal: ≤ 50 ms.
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.core.checkpoints import CheckpointStore
from app.core.checkpoints.shadow_repo import ShadowRepo

FILES = int(os.environ.get("BENCH_CHECKPOINT_FILES", "10000"))
TARGET_BYTES = int(os.environ.get("BENCH_CHECKPOINT_MB", "200")) * 1024 * 1024
RUNS = int(os.environ.get("BENCH_CHECKPOINT_RUNS", "9"))
SEED = 20240611

GIT_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C",
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def git(root: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=root, env=GIT_ENV, check=True,
                          capture_output=True, stdin=subprocess.DEVNULL).stdout


def generate(root: Path) -> list[Path]:
    """The project: source-like text files and some binary ones, in nested folders."""
    rng = random.Random(SEED)
    words = [f"{rng.choice('abcdefghij')}{n}_{rng.randrange(10**6)}".encode()
             for n in range(5000)]
    text = b" ".join(rng.choice(words) + (b"\n" if rng.random() < 0.1 else b"")
                     for _ in range(600_000))
    size = TARGET_BYTES // FILES
    paths = []
    for n in range(FILES):
        folder = root / f"pkg{n % 40:02d}" / f"mod{(n // 40) % 25:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        if n % 20 == 0:
            data = rng.randbytes(size)
        else:
            start = rng.randrange(len(text) - size)
            data = text[start:start + size]
        path = folder / f"file_{n}.{'bin' if n % 20 == 0 else 'py'}"
        path.write_bytes(data)
        paths.append(path)
    (root / ".gitignore").write_text("*.log\n")
    (root / "run.log").write_text("ignored\n")
    for n in range(200):  # an installed environment: ignored, listed once as .venv/
        folder = root / ".venv" / f"lib{n % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{n}.py").write_bytes(rng.randbytes(512))
    return paths


def legacy_store(data: Path, project: Path) -> CheckpointStore:
    """A store that snapshots as before the project repository's state, the ignored listing
    and the rule-file scan were recorded: the incremental baseline, in the same run."""
    store = CheckpointStore(data, project)
    repo = store._repo
    repo.status = lambda ignored=True: ShadowRepo.status(repo, ignored=False)  # type: ignore
    store._repo_state.record = lambda: None  # type: ignore[method-assign]
    rule_files = store._snapshots._rule_files
    rule_files.scan = lambda: []  # type: ignore[method-assign]
    rule_files.refused = lambda: []  # type: ignore[method-assign]
    return store


def timed_ms(fn: object) -> float:
    assert callable(fn)
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


HEARTBEAT_MS = 5


def gui_stalls(data: Path, project: Path, paths: list[Path], rng: random.Random
               ) -> tuple[float, float, float]:
    """(max stall of the first checkpoint, of an incremental one, first checkpoint's seconds)
    with the snapshot awaited on a qasync loop while a 5 ms heartbeat timer ticks."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import asyncio

    import qasync
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.core.agent.checkpointing import Checkpointer

    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    loop.set_default_executor(ThreadPoolExecutor(max_workers=4))  # as the app does
    checkpointer = Checkpointer(data, project)
    gaps: list[float] = []
    last = [time.perf_counter()]

    def beat() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(HEARTBEAT_MS)
    timer.timeout.connect(beat)

    async def measure(label: str) -> tuple[float, float]:
        await asyncio.sleep(0.1)  # the timer settles
        gaps.clear()
        last[0] = t0 = time.perf_counter()
        checkpoint = await checkpointer.snapshot(label)
        took = time.perf_counter() - t0
        await asyncio.sleep(0.02)  # the gap that spans the end of the snapshot, too
        assert checkpoint is not None, "the checkpoint failed"
        return max(0.0, max(gaps) * 1000 - HEARTBEAT_MS), took

    async def both() -> tuple[float, float, float]:
        timer.start()
        try:
            first, first_s = await measure("gui first")
            for path in rng.sample(paths, 5):
                path.write_bytes(path.read_bytes()[:-64] + rng.randbytes(64))
            incremental, _ = await measure("gui incremental")
        finally:
            timer.stop()
        return first, incremental, first_s

    try:
        return loop.run_until_complete(both())
    finally:
        loop.close()


def main() -> int:
    if shutil.which("git") is None:
        print("error: git is not installed", file=sys.stderr)
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="tebiki-bench-checkpoints-"))
    try:
        project, data = tmp / "project", tmp / "data"
        project.mkdir()
        t0 = time.perf_counter()
        paths = generate(project)
        git(project, "init", "-q")
        git(project, "add", "-A")
        # no automatic gc: a detached `git gc --auto` packing 10,000 objects in the background
        # would compete with the measurements below for the CPU
        git(project, "-c", "gc.auto=0", "commit", "-q", "-m", "bench")
        git(project, "status", "--porcelain")  # refreshes the project's index stat cache
        os.sync()  # the generated 200 MB are on disk: writeback does not slow what follows
        print(f"tree_files: {len(paths)}")
        print(f"tree_mb: {sum(p.stat().st_size for p in paths) / 1024 / 1024:.1f}")
        print(f"tree_generate_s: {time.perf_counter() - t0:.1f}")

        store = CheckpointStore(data, project)
        t0 = time.perf_counter()
        store.snapshot("first")
        print(f"checkpoint_first_s: {time.perf_counter() - t0:.2f}")
        # the same tree when it is no git repository (the project's .git moved away meanwhile)
        os.rename(project / ".git", tmp / "project.git")
        try:
            t0 = time.perf_counter()
            CheckpointStore(tmp / "data-nongit", project).snapshot("first")
            print(f"checkpoint_first_nongit_s: {time.perf_counter() - t0:.2f}")
        finally:
            os.rename(tmp / "project.git", project / ".git")
        print(f"checkpoint_second_unchanged_ms: {timed_ms(lambda: store.snapshot('second')):.1f}")

        legacy = legacy_store(tmp / "data-legacy", project)
        legacy.snapshot("first")
        rng = random.Random(SEED + 1)
        rules = store.freeze_rules()  # as a run's checkpoints take them
        incremental: list[float] = []
        incremental_legacy: list[float] = []
        status: list[float] = []
        for run in range(RUNS + 1):  # round 0 is a warm-up
            for path in rng.sample(paths, 5):
                path.write_bytes(path.read_bytes()[:-64] + rng.randbytes(64))
            status_ms = timed_ms(lambda: git(project, "status", "--porcelain"))
            pair = [(store, incremental), (legacy, incremental_legacy)]
            for which, times in pair if run % 2 else pair[::-1]:  # each goes first in turn
                t0 = time.perf_counter()
                which.snapshot(f"run {run}", rules if which is store else None)
                if run:
                    times.append((time.perf_counter() - t0) * 1000)
            if run:
                status.append(status_ms)
        inc, base = statistics.median(incremental), statistics.median(status)
        inc_legacy = statistics.median(incremental_legacy)
        print(f"checkpoint_incremental_ms: {inc:.1f}")
        print(f"checkpoint_incremental_legacy_ms: {inc_legacy:.1f}")
        print(f"incremental_vs_legacy: {inc / inc_legacy:.2f}x")
        print(f"git_status_ms: {base:.1f}")
        print(f"incremental_vs_git_status: {inc / base:.2f}x")
        print(f"checkpoint_unchanged_ms: {timed_ms(lambda: store.snapshot('same')):.1f}")
        # a call edited .gitignore: the run's frozen rules are applied by git ls-files
        gitignore = project / ".gitignore"
        kept = gitignore.read_bytes()
        gitignore.write_bytes(kept + b"*.tmp\n")
        edited: list[float] = []
        for _ in range(RUNS):
            for path in rng.sample(paths, 5):
                path.write_bytes(path.read_bytes()[:-64] + rng.randbytes(64))
            edited.append(timed_ms(lambda: store.snapshot("edited rules", rules)))
        gitignore.write_bytes(kept)
        store.snapshot("rules back")
        print(f"checkpoint_incremental_rules_edited_ms: {statistics.median(edited):.1f}")

        before = store.snapshot("before edit")
        for path in rng.sample(paths, 5):
            path.write_bytes(rng.randbytes(1000))
        after = store.snapshot("after edit")
        changed = [c.path for c in store.changes(before, after)]
        t0 = time.perf_counter()
        plan = store.plan_restore(before, after, changed)
        print(f"plan_restore_5_files_ms: {(time.perf_counter() - t0) * 1000:.1f}")
        t0 = time.perf_counter()
        result = store.restore(plan)
        print(f"restore_5_files_ms: {(time.perf_counter() - t0) * 1000:.1f}")
        print(f"restore_ok: {str(result.ok and len(result.written) == 5).lower()}")
        print(f"checkpoints_kept: {len(store.checkpoints())}")
        print(f"store_mb: {store.usage_bytes() / 1024 / 1024:.1f}")
        t0 = time.perf_counter()
        store.prune(max_age_days=None, max_bytes=None)
        print(f"prune_gc_s: {time.perf_counter() - t0:.2f}")
        print(f"store_after_gc_mb: {store.usage_bytes() / 1024 / 1024:.1f}")

        first_stall, incremental_stall, first_s = gui_stalls(tmp / "data-gui", project, paths,
                                                             rng)
        print(f"checkpoint_gui_first_s: {first_s:.2f}")
        print(f"checkpoint_gui_max_stall_ms: {first_stall:.1f}")
        print(f"checkpoint_gui_max_stall_incremental_ms: {incremental_stall:.1f}")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
