"""GUI responsiveness, start-up time and idle memory, each against a baseline in the same run.

1. Max GUI stall: a 16 ms heartbeat timer runs while a 10,000-token response streams from the
   fake Messages API at full speed and then a 10-second tool runs; the longest gap between
   heartbeats minus 16 ms is the stall. Goal: ≤ 50 ms.
   The first Send also loads the model client and the tools' libraries (in a worker thread), so
   that is inside the scenario.
2. Process start → window shown, Tebiki vs a bare PySide6 window (goal ≤ 2.5×), for a start
   with the database of an earlier one (every start but the first; the very first start, which
   creates and migrates the database, is printed as well). Tebiki's probe runs app.main's own
   start-up (command line, log, QApplication, then the window), which shows its window shell
   first; "ready" (the AI panel painted: what the person types or clicks from then on is kept;
   the tools list follows in a worker thread) is printed as well (goal ≤ 2×), and the event
   loop's start right after it (~20 ms of imports: from then on that input is handled and a
   Send starts). Both start from compiled bytecode, as an installed app does (``_probe_env``).
3. Idle RSS once started and settled, Tebiki vs bare (goal ≤ 2×).
4. A stored 300-message conversation (Markdown answers with code blocks and tables, tool cards)
   reopened in the panel, in a fresh process (tests/bench/long_conversation.py): RSS growth
   (goal ≤ 30 MB), how long the load holds the GUI, and the longest stall while scrolling
   through it (goal ≤ 50 ms).
Prints `name: value` lines.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # tests.fakes, when run as a script
PROBE = Path(__file__).with_name("startup_probe.py")
LONG_CONVERSATION = Path(__file__).with_name("long_conversation.py")
# Rounds of (bare, Tebiki, Tebiki's first start), interleaved: start times on a 2-core VM drift by
# 30 % and more between minutes, and a slow spell then weighs on both alike. The ratios compare the
# medians; the median of each round's own ratio is printed beside them.
RUNS = 15
HEARTBEAT_MS = 16


def _probe_env(bytecode_cache: Path) -> dict[str, str]:
    # As installed: modules load from compiled bytecode (pip compiles on install, and a source
    # checkout writes __pycache__), for both processes alike. Without this, an environment with
    # PYTHONDONTWRITEBYTECODE would compile every app module from source at each start while
    # PySide6 loads from the bytecode pip wrote. The cache lives outside the source tree.
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen",
           "PYTHONPYCACHEPREFIX": str(bytecode_cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


_BYTECODE_CACHE = Path(tempfile.mkdtemp(prefix="tebiki-bench-pyc-"))


def measure_startup(kind: str,
                    data_dir: Path | None = None) -> tuple[float, float, float, int]:
    """(seconds to window shown, to ready, to the event loop running, idle RSS in KiB) of one
    fresh process;
    Tebiki's with the database of ``data_dir`` (a later start), else a new one (the first)."""
    args = [sys.executable, str(PROBE), kind, *([str(data_dir)] if data_dir else [])]
    env = _probe_env(_BYTECODE_CACHE)
    # The probe measures from here (its clock ticks from /proc would be 10 ms coarse).
    env["TEBIKI_PROBE_SPAWNED_AT"] = repr(time.monotonic())
    proc = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=120, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"startup probe {kind} failed:\n{proc.stderr}")
    values = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    shown = float(values["shown"])
    ready = float(values.get("ready", shown))
    return shown, ready, float(values.get("loop", ready)), int(values["rss_kb"])


class SlowTool:
    """A tool that takes 10 seconds without blocking the loop (like a build or a test run)."""

    def __init__(self, seconds: float) -> None:
        from app.core.tools.base import RiskLevel, ToolCategory, ToolSpec

        self.seconds = seconds
        self.spec = ToolSpec("slow_build", "runs for a while", {"type": "object"},
                             ToolCategory.EXECUTION, RiskLevel.LOW)

    async def execute(self, input: Mapping[str, Any], ctx: Any):
        from app.core.tools.base import ToolResult

        proc = await asyncio.create_subprocess_exec("sleep", str(self.seconds))
        await proc.wait()
        return ToolResult.ok("built")


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


# The fake Messages API, scripted: a 10,000-token answer, then a call of the slow tool, then
# "done". In a process of its own, so the RSS measured is the app's (the fake's module brings
# pytest and its plugins).
_FAKE_API = """
import sys
from tests.fakes.anthropic_server import FakeAnthropicServer, Response
server = FakeAnthropicServer().start()
words = " ".join(f"token{i}" for i in range(10_000))
server.script(Response.text(words, chunk_chars=8), Response.tool_use("slow_build", {}),
              Response.text("done"))
print(server.base_url, flush=True)
sys.stdin.read()  # until the bench closes it
server.close()
"""


def _start_fake_api() -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _FAKE_API], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    os.environ["ANTHROPIC_BASE_URL"] = proc.stdout.readline().strip()
    return proc


def measure_stall(tool_seconds: float) -> tuple[float, float, int]:
    import qasync
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    # First, as in app.main: app.ui turns PySide6's import hook off for what follows.
    importlib.import_module("app.ui")
    from app.core.permissions.rules import PermissionRule
    from app.core.services import build_services
    from app.core.store.db import open_database
    from app.core.store.profiles import ToolSetting
    from app.core.tools.default_registry import builtin_provider
    from app.core.tools.providers.base import StaticProvider
    from app.core.tools.registry import ToolRegistry
    from app.main import finish_start
    from app.ui.gc_guard import MainThreadGarbageCollector
    from app.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    collector = MainThreadGarbageCollector(app)  # as app.main: collections on the GUI thread
    data = Path(tempfile.mkdtemp(prefix="tebiki-bench-"))
    project = data / "project"
    project.mkdir()
    server = _start_fake_api()
    os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench"

    registry = ToolRegistry([builtin_provider(),
                             StaticProvider([SlowTool(tool_seconds)], id="bench", priority=1)])
    db = open_database(data / "tebiki.sqlite3")
    services = build_services(db, data, project, registry=registry)
    profile_id = services.profiles.ensure_default().id
    services.profiles.set_tool(profile_id, ToolSetting("slow_build", True, {}))
    services.permissions.rules.add(PermissionRule(decision="allow", tool_name="slow_build",
                                                  priority=100))
    window = MainWindow()  # as app.main: the shell first, then the services
    window.show()
    finish_start(window, services, project)
    assert "httpx" not in sys.modules, "the model client must load with the first run, not before"

    gaps: list[float] = []
    gap_times: list[float] = []
    last = [time.perf_counter()]
    t0 = time.perf_counter()

    def beat() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        gap_times.append(last[0] - t0)
        last[0] = now

    events: list[tuple[float, str]] = []
    original = window.ai_panel.handle_event

    def traced(event: object) -> None:
        name = type(event).__name__
        if not events or events[-1][1] != name:
            events.append((time.perf_counter() - t0, name))
        original(event)

    window.ai_panel.handle_event = traced

    timer = QTimer()
    timer.setInterval(HEARTBEAT_MS)
    timer.timeout.connect(beat)

    async def scenario() -> float:
        # Sent straight away, without typing first: the model client and the tools' libraries
        # are imported by this first run (app.core.warmup), inside the measured window.
        timer.start()
        start = time.perf_counter()
        window.ai_panel.send("stream a long answer")
        while window.ai_panel.running:
            await asyncio.sleep(0.05)
        window.ai_panel.send("now build")
        while window.ai_panel.running:
            await asyncio.sleep(0.05)
        timer.stop()
        return time.perf_counter() - start

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        elapsed = loop.run_until_complete(scenario())
    server.stdin.close()  # type: ignore[union-attr]  # the fake API's process ends
    server.wait(30)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:  # settle into idle before reading RSS, as the probe
        app.processEvents()
        time.sleep(0.01)
    rss_after_runs = _rss_mb()
    db.close()
    collector.stop()
    stall_ms = max(0.0, (max(gaps) - HEARTBEAT_MS / 1000) * 1000)
    print(f"ui_rss_after_first_runs_mb: {rss_after_runs:.1f} (model client and web tools loaded, "
          "1 s idle)")
    worst = sorted(zip(gaps, gap_times, strict=True), reverse=True)[:3]
    print("ui_stall_worst_gaps: " + ", ".join(f"{g * 1000:.0f}ms@{t:.2f}s" for g, t in worst))
    print("ui_stall_event_timeline: " + ", ".join(f"{n}@{t:.2f}s" for t, n in events[:12]))
    return stall_ms, elapsed, len(gaps)


def main() -> None:
    tool_seconds = float(os.environ.get("TEBIKI_BENCH_TOOL_SECONDS", "10"))
    bare, ours, first = [], [], []
    data_dir = Path(tempfile.mkdtemp(prefix="tebiki-bench-data-"))
    measure_startup("bare")  # not measured: writes the bytecode cache (see _probe_env)
    measure_startup("tebiki", data_dir)  # and creates the database the later starts open
    for _ in range(RUNS):  # interleaved, so a busy moment on the machine hits all alike
        bare.append(measure_startup("bare"))
        ours.append(measure_startup("tebiki", data_dir))
        first.append(measure_startup("tebiki"))
    bare_start = statistics.median(s for s, _, _, _ in bare)
    our_start = statistics.median(s for s, _, _, _ in ours)
    our_ready = statistics.median(r for _, r, _, _ in ours)
    our_loop = statistics.median(loop for _, _, loop, _ in ours)
    first_ready = statistics.median(r for _, r, _, _ in first)
    bare_rss = statistics.median(m for _, _, _, m in bare)
    our_rss = statistics.median(m for _, _, _, m in ours)
    print(f"ui_start_to_window_bare_ms: {bare_start * 1000:.0f}")
    print(f"ui_start_to_window_tebiki_ms: {our_start * 1000:.0f}")
    start_ratio = statistics.median(o[0] / b[0] for b, o in zip(bare, ours, strict=True))
    ready_ratio = statistics.median(o[1] / b[0] for b, o in zip(bare, ours, strict=True))
    print(f"ui_start_ratio_vs_bare: {our_start / bare_start:.2f} (median of the rounds' ratios: "
          f"{start_ratio:.2f})")
    print(f"ui_start_to_ready_tebiki_ms: {our_ready * 1000:.0f}")
    print(f"ui_ready_ratio_vs_bare_window: {our_ready / bare_start:.2f} (median of the rounds' "
          f"ratios: {ready_ratio:.2f})")
    print(f"ui_start_to_event_loop_tebiki_ms: {our_loop * 1000:.0f} ({our_loop / bare_start:.2f}x "
          "bare; typing and Send are handled from here)")
    print(f"ui_first_start_to_ready_tebiki_ms: {first_ready * 1000:.0f} "
          f"({first_ready / bare_start:.2f}x bare; creates the database)")
    print(f"ui_idle_rss_bare_mb: {bare_rss / 1024:.1f}")
    print(f"ui_idle_rss_tebiki_mb: {our_rss / 1024:.1f}")
    print(f"ui_idle_rss_ratio_vs_bare: {our_rss / bare_rss:.2f}")
    long_run = subprocess.run([sys.executable, str(LONG_CONVERSATION)], capture_output=True,
                              text=True, cwd=ROOT, timeout=600,
                              env=_probe_env(_BYTECODE_CACHE))
    if long_run.returncode != 0:
        raise SystemExit(f"long conversation failed:\n{long_run.stderr}")
    print(long_run.stdout.strip())
    stall, elapsed, beats = measure_stall(tool_seconds)
    print(f"ui_max_stall_ms: {stall:.1f}")
    print(f"ui_stall_scenario_s: {elapsed:.1f} ({beats} heartbeats, 10000-token stream + "
          f"{tool_seconds:.0f}s tool)")


if __name__ == "__main__":
    main()
