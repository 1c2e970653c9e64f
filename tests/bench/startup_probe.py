"""Child process for bench_ui_responsiveness: start, show a window, report, exit.

`bare`: a plain PySide6 QMainWindow. `tebiki`: the real startup path (database, services,
MainWindow, then the start-up warm-up imports). Prints `shown <seconds since interpreter
start>` and `rss_kb <idle RSS>`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path


def _process_age() -> float:
    # Seconds since this process was created, from /proc (Linux), else since import.
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
    from PySide6.QtWidgets import QApplication, QMainWindow

    app = QApplication([sys.argv[0]])
    if kind == "bare":
        window = QMainWindow()
        window.resize(1200, 780)
    else:
        from app.core.services import build_services
        from app.core.store.db import open_database
        from app.ui.main_window import MainWindow

        data = Path(tempfile.mkdtemp(prefix="tebiki-bench-"))
        db = open_database(data / "tebiki.sqlite3")
        window = MainWindow(services=build_services(db, data), project_root=None)
    window.show()
    app.processEvents()
    print(f"shown {_process_age():.4f}", flush=True)
    if kind != "bare":
        # What app.main does next: import the model SDK and friends (app.core.warmup), so the
        # idle figure is the app as a person has it, not a half-loaded one.
        from app.core.warmup import HEAVY_MODULES, _import_all

        _import_all(HEAVY_MODULES)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:  # settle into idle before reading RSS
        app.processEvents()
        time.sleep(0.01)
    print(f"rss_kb {_rss_kb()}", flush=True)


if __name__ == "__main__":
    main()
