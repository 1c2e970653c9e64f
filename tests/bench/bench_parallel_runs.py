"""Conversations running at once, through the real window, against one run in the same process.

The fake Messages API (a process of its own, so its threads do not share the app's GIL) answers
every request after 200 ms of model latency with a streamed answer. After a warm-up run (the
model client loads), one conversation runs alone (the baseline), then four at once: started
one after the other from the panel (New conversation keeps the earlier ones running in the
background), 20 ms apart. A 16 ms heartbeat timer measures the longest GUI stall while the
four stream. Goals: four at once ≤ 1.3× one run; max stall ≤ 50 ms. Prints `name: value` lines.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # tests.fakes, when run as a script
HEARTBEAT_MS = 16
LATENCY_S = 0.2
PARALLEL = 4
SEND_GAP_S = 0.02  # faster than anyone clicks New conversation, types and sends

_FAKE_API = """
import sys
from tests.fakes.anthropic_server import FakeAnthropicServer, Response
server = FakeAnthropicServer().start()
words = " ".join(f"word{{i}}" for i in range(1500))
answer = Response.text(words, chunk_chars=24).with_options(delay_s={latency},
                                                          chunk_delay_s=0.002)
server.script(*[answer] * 20)
print(server.base_url, flush=True)
sys.stdin.read()  # until the bench closes it
server.close()
"""


def _start_fake_api() -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _FAKE_API.format(latency=LATENCY_S)],
                            cwd=ROOT, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    os.environ["ANTHROPIC_BASE_URL"] = proc.stdout.readline().strip()
    os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench"
    return proc


def main() -> None:
    import qasync
    from PySide6.QtWidgets import QApplication

    importlib.import_module("app.ui")  # as app.main: PySide6's import hook off first
    from app.core.services import build_services
    from app.core.store.db import open_database
    from app.main import finish_start
    from app.ui.gc_guard import MainThreadGarbageCollector
    from app.ui.main_window import MainWindow
    from tests.bench.heartbeat import Heartbeat

    app = QApplication.instance() or QApplication([])
    collector = MainThreadGarbageCollector(app)
    data = Path(tempfile.mkdtemp(prefix="tebiki-bench-runs-"))
    project = data / "project"
    project.mkdir()
    server = _start_fake_api()
    db = open_database(data / "tebiki.sqlite3")
    services = build_services(db, data, project)
    window = MainWindow()
    window.show()
    finish_start(window, services, project)
    window.parallel_runs.confirm_quit = lambda _question: True
    panel = window.ai_panel

    heartbeat = Heartbeat(HEARTBEAT_MS)

    def active() -> int:
        pool = panel.sessions.pool
        return len(pool.board.active()) if pool.made_board else 0

    async def settle() -> None:
        while panel.running or active():
            await asyncio.sleep(0.01)

    async def one_run(prompt: str) -> float:
        panel.new_conversation()
        start = time.perf_counter()
        assert panel.send(prompt)
        await settle()
        return time.perf_counter() - start

    async def scenario() -> tuple[float, float, float]:
        await one_run("warm up")  # the model client and the tools load here
        single = min([await one_run(f"alone {i}") for i in range(3)])
        heartbeat.start()
        start = time.perf_counter()
        for i in range(PARALLEL):
            panel.new_conversation()
            assert panel.send(f"at once {i}")
            await asyncio.sleep(SEND_GAP_S)  # one Send per click: the window paints between
        await settle()
        together = time.perf_counter() - start
        heartbeat.stop()
        stall = heartbeat.stall_ms()
        return single, together, stall

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        single, together, stall = loop.run_until_complete(scenario())
        loop.run_until_complete(panel.shutdown())
    server.stdin.close()  # type: ignore[union-attr]
    server.wait(30)
    db.close()
    collector.stop()
    print(f"parallel_runs_model_latency_ms: {LATENCY_S * 1000:.0f}")
    print(f"parallel_runs_one_run_s: {single:.3f} (best of 3, baseline)")
    print(f"parallel_runs_{PARALLEL}_at_once_s: {together:.3f}")
    print(f"parallel_runs_ratio_vs_one: {together / single:.2f} (goal <= 1.3)")
    print(f"parallel_runs_max_stall_ms: {stall:.1f} (goal <= 50; {len(heartbeat.gaps)} heartbeats, "
          f"{PARALLEL} streams)")
    worst = sorted(heartbeat.gaps, reverse=True)[:3]
    print("parallel_runs_worst_gaps_ms: " + ", ".join(f"{g * 1000:.0f}" for g in worst))


if __name__ == "__main__":
    main()
