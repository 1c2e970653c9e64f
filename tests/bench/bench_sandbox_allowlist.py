"""Benchmark: starting a program in the allowlist sandbox against today's (prints `name: value`).

Run: .venv/bin/python tests/bench/bench_sandbox_allowlist.py [--files N] [--runs N]

On a project of N files (10,000 by default, a few secrets among them) under /var/tmp, the median
wall time to build the command line and run `true` in bubblewrap:

- today: the denylist sandbox as it was (``--ro-bind / /`` plus the hidden list), a faithful
  copy of its ``bwrap_argv`` below;
- allowlist: ``Confinement.launch`` (mount plan, the project's incremental scan, environment
  filter) and the same start; interleaved with the other in the same run.

Goal: the allowlist's median at most 10 ms over today's. The first scan of the project (cold
cache) is printed on its own: it is paid once per project per process.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.core.sandbox import SandboxPolicy, probe_sandbox
from app.core.sandbox.confinement import Confinement
from app.core.sandbox.environment import minimal_env
from app.core.sandbox.mounts import plan_mounts
from app.core.sensitive_paths import sensitive_paths

# -- today's command line, kept verbatim as the baseline --------------------------------------

_TODAY_BASE_FLAGS: tuple[str, ...] = (
    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
    "--unshare-all", "--new-session", "--die-with-parent", "--cap-drop", "ALL",
)
_PRIVATE_TMP = Path("/tmp")


def _real(path: Path) -> Path | None:
    if not os.path.lexists(path):
        return None
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None


@functools.cache
def _own_runtime() -> tuple[Path, ...]:
    app_root = Path(__file__).resolve().parents[2]
    candidates: set[str] = {sys.prefix, sys.base_prefix, sys.exec_prefix,
                            os.path.dirname(os.path.realpath(sys.executable)), str(app_root)}
    return tuple(sorted(Path(c).resolve() for c in candidates if c))


def _within(path: Path, roots: tuple[Path, ...] | list[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def _hide(path: Path) -> list[str]:
    if path.is_dir():
        return ["--tmpfs", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


def today_bwrap_argv(bwrap: str, policy: SandboxPolicy, argv: list[str], executable: str,
                     cwd: Path) -> list[str]:
    writable = [p for p in (_real(w) for w in policy.writable) if p is not None and p.is_dir()]
    readable = [p for p in (_real(r) for r in policy.read_only) if p is not None]
    readable += [p for p in _own_runtime() if p.is_relative_to(_PRIVATE_TMP)
                 and not _within(p, writable) and p not in readable and p.exists()]
    visible = writable + readable
    out = [bwrap, *_TODAY_BASE_FLAGS]
    if policy.network:
        out.append("--share-net")
    hidden: list[Path] = []
    for path in policy.hidden:
        real = _real(path)
        if real is None or real == Path("/"):
            continue
        if real.is_relative_to(_PRIVATE_TMP) and not _within(real, visible):
            continue
        if real not in hidden:
            hidden.append(real)
    containing = [h for h in hidden if any(v.is_relative_to(h) for v in visible)]
    for path in containing:
        out += _hide(path)
    around = [r for r in readable if any(w != r and w.is_relative_to(r) for w in writable)]
    for path in around:
        out += ["--ro-bind", str(path), str(path)]
    for path in writable:
        out += ["--bind", str(path), str(path)]
    for path in readable:
        if path not in around:
            out += ["--ro-bind", str(path), str(path)]
    for path in hidden:
        if path not in containing:
            out += _hide(path)
    out += ["--setenv", "TMPDIR", "/tmp", "--chdir", str(cwd), "--", executable, *argv[1:]]
    return out


# -- the run ----------------------------------------------------------------------------------


def make_project(root: Path, files: int) -> None:
    per_folder = 100
    for i in range(files):
        folder = root / f"pkg{i // per_folder:03d}"
        if i % per_folder == 0:
            folder.mkdir(parents=True)
        (folder / f"mod{i % per_folder:03d}.py").write_text("x = 1\n")
    (root / ".env").write_text("TOKEN=x\n")
    (root / "pkg007" / "terraform.tfstate").write_text("{}\n")


def _start(argv: list[str], env: dict[str, str]) -> None:
    subprocess.run(argv, env=env, check=True, stdin=subprocess.DEVNULL)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    status = probe_sandbox()
    if not status.available or status.executable is None:
        print(f"sandbox: {status.summary}")
        return 0
    project = Path(tempfile.mkdtemp(prefix="tebiki-bench-allowlist-", dir="/var/tmp")).resolve()
    try:
        make_project(project, args.files)
        true = shutil.which("true") or "/usr/bin/true"
        policy = SandboxPolicy(writable=(project,), hidden=sensitive_paths())
        confinement = Confinement(status, policy)
        env = minimal_env(project_root=project)
        started = time.perf_counter()
        plan_mounts(policy, executable=true)  # cold: the first scan of the project
        first_scan_ms = (time.perf_counter() - started) * 1000
        today: list[float] = []
        allowlist: list[float] = []
        plan_only: list[float] = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            _start(today_bwrap_argv(status.executable, policy, [true], true, project), env)
            t1 = time.perf_counter()
            _, argv, clean = confinement.launch([true], true, project, env)
            t2 = time.perf_counter()
            _start(argv, clean)
            t3 = time.perf_counter()
            today.append((t1 - t0) * 1000)
            allowlist.append((t3 - t1) * 1000)
            plan_only.append((t2 - t1) * 1000)
        mounts = len(plan_mounts(policy, executable=true).mounts)
        today_ms, allow_ms = statistics.median(today), statistics.median(allowlist)
        print(f"sandbox_project_files: {args.files}")
        print(f"sandbox_start_today_median_ms: {today_ms:.2f}")
        print(f"sandbox_start_allowlist_median_ms: {allow_ms:.2f}")
        print(f"sandbox_start_difference_ms: {allow_ms - today_ms:+.2f}")
        print(f"sandbox_allowlist_plan_median_ms: {statistics.median(plan_only):.2f}")
        print(f"sandbox_allowlist_first_scan_ms: {first_scan_ms:.1f}")
        print(f"sandbox_allowlist_mounts: {mounts}")
        print(f"sandbox_goal_met: {allow_ms - today_ms <= 10.0}")
    finally:
        shutil.rmtree(project, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
