"""Time the frozen bundle against `python -m app`, both with --smoke-test, in the same run.

    python packaging/measure_startup.py [--bundle dist/tebiki/tebiki] [-n 7]

Each run is a fresh process with a fresh data dir: start → QApplication → database → main window
shown → 0.2 s of event processing → exit, so the figures are start-to-window plus the same fixed
dwell and teardown for both. One untimed warm-up run each fills the page cache; the runs then
alternate so both see the same machine load. Prints `name: value` lines (seconds, medians).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMOKE_DWELL_S = 0.2  # app/main.py keeps the smoke-test window up this long


def timed_run(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    with tempfile.TemporaryDirectory(prefix="tebiki-measure-") as data:
        started = time.perf_counter()
        proc = subprocess.run([*argv, "--smoke-test"], cwd=cwd, capture_output=True, text=True,
                              env={**env, "TEBIKI_DATA_DIR": data}, timeout=120)
        elapsed = time.perf_counter() - started
    if proc.returncode != 0 or "smoke test ok" not in proc.stdout:
        raise SystemExit(f"{argv[0]} --smoke-test failed ({proc.returncode}):\n{proc.stderr}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=ROOT / "dist" / "tebiki" / "tebiki",
                        help="the frozen executable (default: %(default)s)")
    parser.add_argument("-n", "--runs", type=int, default=7)
    args = parser.parse_args(argv)
    if not os.access(args.bundle, os.X_OK):
        raise SystemExit(f"no frozen executable at {args.bundle}: run `make package` first")

    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    frozen_env = {k: v for k, v in env.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    candidates = {
        "python_m_app": ([sys.executable, "-m", "app"], ROOT, env),
        "frozen": ([str(args.bundle.resolve())], Path(tempfile.gettempdir()), frozen_env),
    }
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for command, cwd, run_env in candidates.values():
        timed_run(command, cwd, run_env)  # warm-up
    for _ in range(args.runs):
        for name, (command, cwd, run_env) in candidates.items():
            times[name].append(timed_run(command, cwd, run_env))

    print(f"runs: {args.runs}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name}_smoke_median_s: {median:.3f}")
        print(f"{name}_smoke_min_s: {min(values):.3f}")
        print(f"{name}_start_to_window_est_s: {median - SMOKE_DWELL_S:.3f}")
    ratio = statistics.median(times["frozen"]) / statistics.median(times["python_m_app"])
    print(f"frozen_vs_python_ratio: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
