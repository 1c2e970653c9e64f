"""Entry point: QApplication + qasync event loop + main window."""

from __future__ import annotations

import gc
import importlib
import logging
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar, cast

from app.command_line import parse_args, qt_argv
from app.core.config import APP_ID, APP_NAME, AppPaths, resolve_paths, resolve_project_root
from app.core.store.errors import DatabaseError
from app.startup_threads import join_startup_threads, start_loading_services, start_tools_build

if TYPE_CHECKING:
    import argparse
    import asyncio
    from concurrent.futures import Future
    from pathlib import Path

    from PySide6.QtWidgets import QApplication, QWidget

    from app.core.instance_lock import InstanceLock
    from app.core.services import Services
    from app.ui.main_window import MainWindow

log = logging.getLogger("tebiki")
T = TypeVar("T")

# How often the GUI thread looks at the start-up worker while it handles events.
_START_POLL_S = 0.005
# The tools build starts after the panel's first paint, so its imports do not hold the GIL
# while it is drawn.
_AFTER_READY_DELAY_MS = 30
# How long quitting waits for the start-up threads (normally well under a second).
_STARTUP_JOIN_TIMEOUT_S = 30.0
# How long quitting goes on after Qt itself quit (each lost-display restart of the loop is short).
_SHUTDOWN_TIMEOUT_S = 60.0


def main(argv: Sequence[str] | None = None) -> int:
    # No automatic collection from the start: what start-up allocates (modules, classes, the
    # window) lives as long as the app and is frozen at ready (finish_start), so walking it
    # meanwhile only costs time (~10-20 ms of start-up). Once the window exists the GUI
    # thread's collector takes over (app.ui.gc_guard); its stop() turns automatic collection
    # back on.
    gc.disable()
    argv = sys.argv[1:] if argv is None else argv
    args, paths = prepare_start(argv)
    app = create_application(argv)
    instance = claim_data_folder(paths, args.smoke_test)
    if instance is None:
        return 0 if _raised_first else 1
    try:
        return _run(app, args, paths)
    finally:
        instance.release()


# Whether claim_data_folder found another instance and brought its window to the front.
_raised_first = False


def claim_data_folder(paths: AppPaths, headless: bool) -> InstanceLock | None:
    """This instance's hold on the data folder; None when another has it: its window is asked
    to come to the front, or the person is told why nothing starts. Two instances on one
    database never run side by side (app.core.instance_lock)."""
    global _raised_first
    from app.core.instance_lock import InstanceLock, InstanceRunningError, instance_channel

    try:
        return InstanceLock.acquire(paths.data_dir)
    except InstanceRunningError as running:
        from app.ui.single_instance import ask_first_to_raise

        _raised_first = ask_first_to_raise(instance_channel(paths.data_dir))
        if _raised_first:
            print(f"{APP_NAME} is already running with this data folder; its window was "
                  "brought to the front.", file=sys.stderr)
        else:
            _fatal(str(running), headless)
        return None


def _run(app: QApplication, args: argparse.Namespace, paths: AppPaths) -> int:
    from app.ui.gc_guard import MainThreadGarbageCollector

    garbage_collector = MainThreadGarbageCollector(app)
    window, loading = open_window(paths)
    from app.core.instance_lock import instance_channel
    from app.ui.single_instance import RaiseOnRequest

    # A second start on this data folder brings this window to the front; kept until the end.
    raise_on_request = RaiseOnRequest(window, instance_channel(paths.data_dir))  # noqa: F841
    wait_painting(loading)
    try:
        services = loading.result()
    except Exception as exc:  # say why instead of dying silently
        garbage_collector.stop()
        app.processEvents()  # what was typed meanwhile goes to the shell, not to the message box
        _fatal(_start_failure(exc, paths), args.smoke_test, window)
        return 1
    try:
        if window.isVisible():  # not closed while it was starting
            show_ready(window, services, resolve_project_root(args.project))
        code = run_event_loop(app, window, services, args.smoke_test)
    finally:
        garbage_collector.stop()
        services.db.close()
    if args.smoke_test and code == 0:
        print(f"smoke test ok: window {window.windowTitle()!r}, data dir {paths.data_dir}")
    return code


def prepare_start(argv: Sequence[str]) -> tuple[argparse.Namespace, AppPaths]:
    """What comes before Qt: the command line, the data folder and the log."""
    args = parse_args(argv)
    if args.smoke_test:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        if not args.data_dir and not os.environ.get("TEBIKI_DATA_DIR"):
            import tempfile

            args.data_dir = tempfile.mkdtemp(prefix="tebiki-smoke-")
    paths = resolve_paths(args.data_dir)
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    from app.core.warmup import keep_httpx_cli_out

    keep_httpx_cli_out()  # whichever part of the app imports httpx first
    from app.core.logging_setup import configure_logging

    configure_logging(paths.log_file)  # rotating, floods collapsed: the log cannot fill the disk
    return args, paths


def create_application(argv: Sequence[str]) -> QApplication:
    """The QApplication (Qt's own options in ``argv`` are passed on), named, with its icon."""
    from PySide6.QtWidgets import QApplication

    importlib.import_module("app.ui")  # PySide6's import hook off first (app.ui.pyside_imports)
    from app.resources import app_icon

    # instance() is typed as QCoreApplication; ours is always a QApplication.
    app = cast(QApplication, QApplication.instance()) or QApplication(qt_argv(sys.argv[0], argv))
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setDesktopFileName(APP_ID)
    # We end the loop ourselves after cleaning up, not Qt when the last window closes: set
    # before the window shows, as it may be closed before the event loop runs.
    app.setQuitOnLastWindowClosed(False)
    app.setWindowIcon(app_icon())
    return app


def run_event_loop(app: QApplication, window: MainWindow, services: Services,
                   smoke_test: bool = False) -> int:
    """Run the asyncio event loop (qasync's, on Qt's) until the window closes, then shut down.

    It starts after ready (``new_event_loop_runner``); input meanwhile waits in Qt's queue, and
    the loop handles it first."""
    import asyncio

    async def run_until_closed() -> None:
        closed = asyncio.get_running_loop().create_future()

        def on_closed() -> None:
            if not closed.done():
                closed.set_result(None)

        app.lastWindowClosed.connect(on_closed)
        app.aboutToQuit.connect(on_closed)
        if not window.isVisible():  # closed before the loop ran (a signal we did not hear)
            on_closed()
        started: list[asyncio.Future[None]] = []

        def start_mcp() -> None:
            if not closed.done():
                started.append(asyncio.ensure_future(services.start_mcp()))

        # Once the tools are attached (built after ready, in a worker thread).
        window.tools_attached.connect(start_mcp)
        if window.tools_are_attached:  # already: the loop may run their queued signal first
            start_mcp()
        if smoke_test:
            await asyncio.sleep(0.2)
            window.close()
        await closed  # at once if the window was closed while it was starting
        for mcp_start in started:
            mcp_start.cancel()

    async def shut_down() -> int:
        # Nothing pending may run after the window is gone; then release network clients.
        if window.services is not None:  # the panel was built
            await window.ai_panel.shutdown()
        if not await asyncio.to_thread(join_startup_threads, _STARTUP_JOIN_TIMEOUT_S):
            log.warning("a start-up thread is still running at quit")
        await services.aclose()
        return 0

    with new_event_loop_runner() as runner:
        loop = runner.get_loop()
        run_through_quits(loop, loop.create_task(run_until_closed()))
        return run_through_quits(loop, loop.create_task(shut_down()))


def run_through_quits(loop: asyncio.AbstractEventLoop, task: asyncio.Task[T]) -> T:
    """Run qasync's loop until ``task`` is done, even when Qt quits under it.

    Qt quits by itself when the desktop session ends or the display goes away; qasync's loop
    then stops with the task still pending (a lost display stops it again at every start). The
    shutdown must still finish: stop the running conversations, close the MCP servers."""
    deadline = time.monotonic() + _SHUTDOWN_TIMEOUT_S
    while True:
        try:
            return loop.run_until_complete(task)
        except RuntimeError:
            # The task's own error, or time is up: raise it. Else the loop stopped under it.
            if task.done() or time.monotonic() > deadline:
                raise
            log.info("Qt quit before the window closed; the shutdown goes on")


def new_event_loop_runner() -> asyncio.Runner:
    """asyncio's runner on qasync's loop (Qt's own, driven from Python), set up for the app.

    Imported only now, after ready: nothing on screen needs it before, and asyncio (with ssl)
    and qasync are ~20 ms of imports."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    import qasync

    from app.ui import crash

    gc.freeze()  # what the event loop imported lives as long as the app, as in finish_start
    runner = asyncio.Runner(loop_factory=qasync.QEventLoop)
    loop = runner.get_loop()
    # Plain worker threads for asyncio.to_thread (database, imports), not QThreads.
    loop.set_default_executor(ThreadPoolExecutor(max_workers=4, thread_name_prefix="tebiki-worker"))
    crash.install(loop)
    return runner


def show_window(paths: AppPaths) -> MainWindow:
    """The main window's shell, at its saved size and place, on screen now; the store and the
    tools load behind it (``app.startup_threads``, then ``MainWindow.attach_services``)."""
    from app.core.store.early import read_settings_early
    from app.ui.main_window import LAYOUT_KEYS, MainWindow

    window = MainWindow()
    window.restore_layout(read_settings_early(paths.database, LAYOUT_KEYS))
    window.show()
    return window


def open_window(paths: AppPaths) -> tuple[MainWindow, Future[Services]]:
    """The window shell on screen and painted (``show_window``), the store and the panel's
    modules loading behind it in a worker thread (``start_loading_services``). Until they are
    in (``wait_painting``), this thread only paints and handles events, not the person's input.
    """
    window = show_window(paths)
    loading = start_loading_services(paths)
    handle_events_but_input()
    return window, loading


def finish_start(window: MainWindow, services: Services, project_root: Path | None) -> None:
    """Fill the shell in (the window is ready), then take what start-up imported out of the
    garbage collector's generations: it lives as long as the app (see app.core.warmup). Once
    the panel is on screen, a worker thread builds the tools part of the services (the window
    attaches it when done: ``MainWindow.tools_built``), then imports what the panels open later
    (``app.ui.deferred_imports.DEFERRED_UI_MODULES``)."""
    from PySide6.QtCore import QTimer

    window.attach_services(services, project_root)
    gc.freeze()
    QTimer.singleShot(_AFTER_READY_DELAY_MS, window, lambda: start_tools_build(window, services))


def show_ready(window: MainWindow, services: Services, project_root: Path | None) -> None:
    """``finish_start``, then the panel's first paint: the window is ready."""
    finish_start(window, services, project_root)
    handle_events_but_input()


def handle_events_but_input() -> None:
    """Handle Qt's pending events (paints, resizes, timers, a close) but not the person's input
    (keys, clicks): until the event loop runs (``run_event_loop``, after ready) that waits in
    Qt's queue. So what is typed while the window starts reaches the prompt, which has the
    keyboard from ready on, and a Send clicked meanwhile runs once its loop is there."""
    from PySide6.QtCore import QCoreApplication, QEventLoop

    QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)


def wait_painting(loading: Future[Services]) -> None:
    """Handle the window's events but the person's input (``handle_events_but_input``) until
    ``loading`` is done."""
    from concurrent.futures import wait

    while not loading.done():
        handle_events_but_input()
        wait([loading], timeout=_START_POLL_S)


def _start_failure(exc: Exception, paths: AppPaths) -> str:
    if isinstance(exc, DatabaseError):
        log.error("cannot open the database", exc_info=exc)
        return f"Tebiki cannot open its database at {paths.database}:\n{exc}"
    log.error("start-up failed", exc_info=exc)
    return f"Tebiki could not start: {exc}\nDetails are in {paths.log_file}."


def _fatal(message: str, headless: bool, window: QWidget | None = None) -> None:
    print(message, file=sys.stderr)
    if headless:
        return
    from PySide6.QtWidgets import QMessageBox

    QMessageBox.critical(window, APP_NAME, message)


if __name__ == "__main__":
    raise SystemExit(main())
