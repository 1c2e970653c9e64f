"""Child process for bench_ui_responsiveness: start, show a window, report, exit.

`bare`: a plain PySide6 QMainWindow. `tebiki`: the app's start-up path, app.main's own steps in
its order (``prepare_start``, ``create_application``, ``open_window``, ``wait_painting``,
``show_ready``, ``new_event_loop_runner``). Prints `shown <seconds since process start>`, for Tebiki
also `ready <seconds>` (the panels painted: input from then on is kept) and `loop <seconds>` (the
event loop runs: that input is handled, a Send starts), and `rss_kb <idle RSS>`.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
import tempfile
import time
from pathlib import Path

# This checkout's app, not whichever one the environment's editable install points at.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def _process_age() -> float:
    # Seconds since the parent started this process: it passes its CLOCK_MONOTONIC reading
    # taken just before the spawn (microsecond resolution, the same for both kinds of probe).
    # Run by hand, from /proc (Linux; clock ticks, 10 ms), else since import.
    spawned = os.environ.get("TEBIKI_PROBE_SPAWNED_AT")
    if spawned:
        return time.monotonic() - float(spawned)
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except OSError:
        return time.perf_counter()


def _rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main() -> None:
    kind = sys.argv[1]
    if kind == "bare":
        from PySide6.QtWidgets import QApplication, QMainWindow

        app = QApplication([sys.argv[0]])
        window = QMainWindow()
        window.resize(1200, 780)
        window.show()
        app.processEvents()
        print(f"shown {_process_age():.4f}", flush=True)
    else:
        # The app's own start-up path (app.main.main), in its order: the command line, the data
        # folder and the log, then Qt; the window shell, the store and the panel's modules
        # loading in a worker thread while Qt paints it, then the panels; then the event loop.
        entry = importlib.import_module("app.main")
        gc.disable()  # as app.main.main does first
        # A data folder from an earlier start (argv[2]), or a new one: the first start.
        data_dir = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="tebiki-bench-")
        argv = ["--data-dir", data_dir]
        _args, paths = entry.prepare_start(argv)
        app = entry.create_application(argv)
        from app.ui.gc_guard import MainThreadGarbageCollector

        collector = MainThreadGarbageCollector(app)
        window, loading = entry.open_window(paths)
        print(f"shown {_process_age():.4f}", flush=True)
        entry.wait_painting(loading)  # the GUI keeps painting meanwhile, as in the app
        entry.show_ready(window, loading.result(), None)
        print(f"ready {_process_age():.4f}", flush=True)

        # Then the event loop (app.main.run_event_loop), which handles what was typed meanwhile:
        # its modules imported, its first callback run.
        async def first_turn() -> None:
            print(f"loop {_process_age():.4f}", flush=True)

        with entry.new_event_loop_runner() as runner:
            runner.run(first_turn())
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:  # settle into idle before reading RSS
        app.processEvents()
        time.sleep(0.01)
    print(f"rss_kb {_rss_kb()}", flush=True)
    if kind != "bare":
        collector.stop()


if __name__ == "__main__":
    main()
