"""`python -m app` starts, honours the data-dir overrides and exits cleanly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from app.core.config import resolve_paths, resolve_project_root

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", **env_extra}
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)


def test_smoke_run_creates_database_in_data_dir_flag(tmp_path):
    data = tmp_path / "flag-data"
    proc = _run(["--smoke-test", "--data-dir", str(data)], {})
    assert proc.returncode == 0, proc.stderr
    assert (data / "tebiki.sqlite3").is_file()
    assert "smoke test ok" in proc.stdout


def test_env_data_dir_and_project_root(tmp_path):
    data, project = tmp_path / "env-data", tmp_path / "proj"
    project.mkdir()
    proc = _run(["--smoke-test"], {"TEBIKI_DATA_DIR": str(data),
                                   "TEBIKI_PROJECT_ROOT": str(project)})
    assert proc.returncode == 0, proc.stderr
    assert (data / "tebiki.sqlite3").is_file()
    assert "proj — Tebiki" in proc.stdout


def test_unusable_database_exits_nonzero_with_reason(tmp_path):
    data = tmp_path / "bad"
    data.mkdir()
    (data / "tebiki.sqlite3").write_bytes(b"garbage" * 1000)
    proc = _run(["--smoke-test", "--data-dir", str(data)], {})
    assert proc.returncode != 0
    assert "cannot open its database" in proc.stderr


def test_config_resolution(tmp_path, monkeypatch):
    monkeypatch.setenv("TEBIKI_DATA_DIR", str(tmp_path / "d"))
    assert resolve_paths().data_dir == (tmp_path / "d").resolve()
    assert resolve_paths(tmp_path / "flag").data_dir == (tmp_path / "flag").resolve()
    monkeypatch.setenv("TEBIKI_PROJECT_ROOT", str(tmp_path))
    assert resolve_project_root() == tmp_path.resolve()
    monkeypatch.setenv("TEBIKI_PROJECT_ROOT", str(tmp_path / "missing"))
    assert resolve_project_root() is None


def test_start_up_failure_after_the_window_is_shown_is_reported(tmp_path):
    # The services load behind the window; a failure there must still say why and exit non-zero.
    data = tmp_path / "data"
    code = ("import sys, app.main\n"
            "def broken(paths): raise RuntimeError('tools could not load')\n"
            "app.startup_threads.load_services = broken\n"
            f"sys.exit(app.main.main(['--smoke-test', '--data-dir', {str(data)!r}]))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, timeout=120)
    assert proc.returncode == 1
    assert "Tebiki could not start: tools could not load" in proc.stderr
    assert "smoke test ok" not in proc.stdout
    assert "tools could not load" in (data / "tebiki.log").read_text()


def test_closing_the_window_while_it_starts_exits_cleanly(tmp_path):
    data = tmp_path / "data"
    code = ("import sys, time, app.main\n"
            "from PySide6.QtCore import QTimer\n"
            "real_load, real_show = app.startup_threads.load_services, app.main.show_window\n"
            "def slow_load(paths):\n"
            "    time.sleep(0.5)\n"
            "    return real_load(paths)\n"
            "shown = []\n"
            "def show_then_close(paths):\n"
            "    window = real_show(paths)\n"
            "    shown.append(window)\n"
            "    QTimer.singleShot(50, window.close)\n"
            "    return window\n"
            "app.startup_threads.load_services = slow_load\n"
            "app.main.show_window = show_then_close\n"
            f"code = app.main.main(['--data-dir', {str(data)!r}])\n"
            "print('exit', code, 'attached', shown[0].services is not None)\n"
            "sys.exit(code)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "exit 0 attached False" in proc.stdout  # nothing was built into a closed window
    assert (data / "tebiki.sqlite3").is_file()  # the store was opened, then closed again


def test_a_window_closed_before_the_event_loop_runs_still_exits_cleanly(tmp_path):
    # Closed at once, before the loop (and its close signals) exist: under load the close
    # above can land there too. Neither a hang nor Qt quitting the loop under us.
    data = tmp_path / "data"
    code = ("import sys, app.main\n"
            "real_show = app.main.show_window\n"
            "shown = []\n"
            "def show_then_close(paths):\n"
            "    window = real_show(paths)\n"
            "    shown.append(window)\n"
            "    window.close()\n"
            "    return window\n"
            "app.main.show_window = show_then_close\n"
            f"code = app.main.main(['--data-dir', {str(data)!r}])\n"
            "print('exit', code, 'attached', shown[0].services is not None)\n"
            "sys.exit(code)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "exit 0 attached False" in proc.stdout


def test_quitting_waits_for_the_start_up_threads_including_ones_they_started():
    import threading

    from app import startup_threads as entry

    release = threading.Event()
    finished: list[str] = []

    def child() -> None:
        release.wait(5)
        finished.append("child")

    def parent() -> None:
        entry._start_thread(child, name="test-child")
        finished.append("parent")

    entry._startup_threads.clear()
    entry._start_thread(parent, name="test-parent")
    assert entry.join_startup_threads(0.2) is False  # the child still waits
    release.set()
    assert entry.join_startup_threads(5.0) is True
    assert sorted(finished) == ["child", "parent"]
    entry._startup_threads.clear()


def test_the_services_load_in_a_worker_thread(monkeypatch, tmp_path):
    # The window paints while a worker loads the services (app.main.main,
    # tests/bench/startup_probe.py).
    import threading

    import app.startup_threads as entry

    seen: list[str] = []

    def load(paths):
        seen.append(threading.current_thread().name)
        return "services"

    monkeypatch.setattr(entry, "load_services", load)
    future = entry.start_loading_services(resolve_paths(tmp_path))
    assert future.result(timeout=30) == "services"
    assert seen == ["tebiki-services"]
    entry.join_startup_threads(5.0)
    entry._startup_threads.clear()


def test_a_failure_while_loading_the_services_reaches_the_waiting_thread(monkeypatch, tmp_path):
    import pytest

    import app.startup_threads as entry
    from app.core.store.errors import DatabaseError

    def broken(paths):
        raise DatabaseError("the disk is full")

    monkeypatch.setattr(entry, "load_services", broken)
    future = entry.start_loading_services(resolve_paths(tmp_path))
    with pytest.raises(DatabaseError, match="disk is full"):
        future.result(timeout=30)
    entry.join_startup_threads(5.0)
    entry._startup_threads.clear()


_QUIT_BY_QT = """
import sys
from PySide6.QtCore import QTimer
import app.main as app_main

real_run = app_main.run_event_loop

def run(app, window, services, smoke_test):
    # Qt quits by itself, not through the window: the desktop session ends or the display goes.
    QTimer.singleShot(300, app.quit)
    real_aclose = services.aclose
    async def aclose():
        print("services closed")
        await real_aclose()
    services.aclose = aclose
    return real_run(app, window, services, False)

app_main.run_event_loop = run
sys.exit(app_main.main(["--data-dir", sys.argv[1]]))
"""


def test_when_qt_quits_by_itself_the_app_still_shuts_down_cleanly(tmp_path):
    # Before: the shutdown ran on after the event loop had stopped, failed with "no running
    # event loop" at its first await of a thread, and never stopped the MCP servers.
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-c", _QUIT_BY_QT, str(tmp_path / "data")],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "services closed" in proc.stdout
