"""Entry point: QApplication + qasync event loop + main window."""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import os
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from app.core.config import APP_ID, APP_NAME, AppPaths, resolve_paths, resolve_project_root
from app.core.store.errors import DatabaseError

if TYPE_CHECKING:
    from pathlib import Path

    from PySide6.QtWidgets import QWidget

    from app.core.services import Services
    from app.core.store.db import Database
    from app.ui.main_window import MainWindow

log = logging.getLogger("tebiki")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=APP_ID, description="Tebiki, a desktop AI agent "
                                     "workbench")
    parser.add_argument("--data-dir", help="where the database and logs live "
                        "(default: $TEBIKI_DATA_DIR or the platform's user data dir)")
    parser.add_argument("--project", help="project folder to open (default: "
                        "$TEBIKI_PROJECT_ROOT)")
    parser.add_argument("--smoke-test", action="store_true",
                        help="start offscreen, build the main window, exit 0 (packaging check)")
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = _parser()
    # Qt's own options (-style, -platform, -reverse…) are not ours: qt_argv passes them on.
    args, _unknown = parser.parse_known_args(argv)
    return args


def qt_argv(program: str, argv: Sequence[str]) -> list[str]:
    """The command line QApplication sees: the program and every argument that is not one of
    ours (``parse_args``), so Qt's own options (``-style fusion``, ``-platform xcb``,
    ``-reverse``) take effect."""
    _args, unknown = _parser().parse_known_args(argv)
    return [program, *unknown]


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.smoke_test:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        if not args.data_dir and not os.environ.get("TEBIKI_DATA_DIR"):
            import tempfile

            args.data_dir = tempfile.mkdtemp(prefix="tebiki-smoke-")
    paths = resolve_paths(args.data_dir)
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    from app.core.logging_setup import configure_logging

    configure_logging(paths.log_file)  # rotating, floods collapsed: the log cannot fill the disk

    from PySide6.QtWidgets import QApplication

    from app.ui.gc_guard import MainThreadGarbageCollector

    # instance() is typed as QCoreApplication; ours is always a QApplication.
    app = cast(QApplication, QApplication.instance()) or QApplication(qt_argv(sys.argv[0], argv))
    garbage_collector = MainThreadGarbageCollector(app)
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setDesktopFileName(APP_ID)
    from app.resources import app_icon

    app.setWindowIcon(app_icon())
    window = show_window(paths)
    app.processEvents()  # paint it before anything else is imported
    # The event loop's modules come after the first paint: they are not needed to draw it.
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    import qasync

    loaded: list[Services] = []
    failures: list[str] = []

    async def run_until_closed() -> int:
        # We end the loop ourselves after cleaning up, not Qt when the last window closes.
        app.setQuitOnLastWindowClosed(False)
        closed = asyncio.get_running_loop().create_future()

        def on_closed() -> None:
            if not closed.done():
                closed.set_result(None)

        app.lastWindowClosed.connect(on_closed)
        app.aboutToQuit.connect(on_closed)
        try:
            services = await asyncio.to_thread(load_services, paths)
        except DatabaseError as exc:  # say why instead of dying silently (after the loop)
            log.exception("cannot open the database")
            failures.append(f"Tebiki cannot open its database at {paths.database}:\n{exc}")
            return 1
        except Exception as exc:
            log.exception("start-up failed")
            failures.append(f"Tebiki could not start: {exc}\nDetails are in {paths.log_file}.")
            return 1
        loaded.append(services)
        if closed.done():  # the window was closed while it was starting
            await services.aclose()
            return 0
        finish_start(window, services, resolve_project_root(args.project))
        mcp_start = asyncio.ensure_future(services.start_mcp())
        if args.smoke_test:
            await asyncio.sleep(0.2)
            window.close()
        await closed
        # Nothing pending may run after the window is gone; then release network clients.
        await window.ai_panel.shutdown()
        mcp_start.cancel()
        await services.aclose()
        return 0

    from app.ui import crash

    try:
        with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
            loop = runner.get_loop()
            # Plain worker threads for asyncio.to_thread (database, imports), not QThreads.
            loop.set_default_executor(ThreadPoolExecutor(max_workers=4,
                                                         thread_name_prefix="tebiki-worker"))
            crash.install(loop)
            code = runner.run(run_until_closed())
    finally:
        garbage_collector.stop()
        for services in loaded:
            services.db.close()
    for message in failures:
        _fatal(message, args.smoke_test, window)
    if args.smoke_test and code == 0:
        print(f"smoke test ok: window {window.windowTitle()!r}, data dir {paths.data_dir}")
    return code


def show_window(paths: AppPaths) -> MainWindow:
    """The main window's shell, at its saved size and place, on screen now; the store and the
    tools load behind it (``load_services``, then ``MainWindow.attach_services``)."""
    from app.core.store.early import read_settings_early
    from app.ui.main_window import LAYOUT_KEYS, MainWindow

    window = MainWindow()
    window.restore_layout(read_settings_early(paths.database, LAYOUT_KEYS))
    window.show()
    return window


def finish_start(window: MainWindow, services: Services, project_root: Path | None) -> None:
    """Fill the shell in, then take what start-up imported out of the garbage collector's
    generations: it lives as long as the app (see app.core.warmup). Once the panels are on
    screen, a worker thread imports what they open later (``DEFERRED_UI_MODULES``)."""
    from PySide6.QtCore import QTimer

    window.attach_services(services, project_root)
    gc.freeze()
    QTimer.singleShot(_DEFERRED_UI_DELAY_MS, window, _warm_up_deferred_ui)


# Modules the panels need, imported in the worker too, so the GUI thread only builds widgets.
_PANEL_MODULES = ("app.ui.widgets.ai_panel", "app.ui.widgets.tools_panel",
                  "app.ui.widgets.history_view")
# What the panels open or show on demand: the dialogs (an approval, a tool's Configure…, the
# undo preview and the diff), a run's tool cards and a reopened conversation's replay. The window
# is ready without them (tens of ms of imports), so they are imported after it, off the GUI thread,
# before a person can ask for one. Should one be asked for sooner, its first use imports it.
DEFERRED_UI_MODULES = ("app.ui.dialogs.approval", "app.ui.dialogs.tool_config",
                       "app.ui.dialogs.restore_preview", "app.ui.widgets.tool_card",
                       "app.ui.widgets.conversation_replay")
# What Send needs that the panel imports on first use: the agent's session (and its tool loop).
# Today app.core.services loads it before ready (app/core/agent/__init__.py imports the whole
# package); once that package loads its parts lazily, this warm-up keeps the first Send from
# importing it on the GUI thread.
DEFERRED_AGENT_MODULES = ("app.core.agent.session",)
# After the panels' first paint, so the import does not hold the GIL while they are drawn.
_DEFERRED_UI_DELAY_MS = 300


def _warm_up_deferred_ui() -> None:
    from app.core.warmup import import_all

    threading.Thread(target=import_all, args=(DEFERRED_UI_MODULES + DEFERRED_AGENT_MODULES,),
                     daemon=True, name="tebiki-ui-warmup").start()


def _probe_sandbox() -> None:
    # The sandbox probe runs a program (bubblewrap, ~10 ms of waiting); build_services waits
    # for this result (app.core.sandbox.status caches it) instead of probing itself.
    try:
        from app.core.sandbox.status import sandbox_status

        sandbox_status()
    except Exception:  # build_services probes again and reports it
        log.exception("sandbox probe failed")
    # Then the CLI tools' `--version` probes (rg, fd): the first detection, in build_services,
    # takes their answers.
    try:
        from app.core.tools.providers.cli import probe_versions_early

        probe_versions_early()
    except Exception:  # the detection probes again and reports it
        log.exception("CLI version probe failed")


def _open_store(paths: AppPaths, opened: list[Database | BaseException]) -> None:
    try:
        from app.core.store.db import open_database

        opened.append(open_database(paths.database))
    except BaseException as exc:  # load_services raises it
        opened.append(exc)


def load_services(paths: AppPaths) -> Services:
    """Open (create, migrate) the database and build the services. Runs in a worker thread:
    it is mostly imports, and the window is already up. Beside it, each in a thread of its own,
    the database opens (its writes wait for the disk) and the sandbox and CLI tool probes run
    (they wait for programs): that waiting happens while this thread imports."""
    threading.Thread(target=_probe_sandbox, daemon=True, name="tebiki-sandbox-probe").start()
    opened: list[Database | BaseException] = []
    opener = threading.Thread(target=_open_store, args=(paths, opened), daemon=True,
                              name="tebiki-store-open")
    opener.start()
    try:
        from app.core.services import build_services
    except BaseException:
        opener.join()
        if not isinstance(opened[0], BaseException):
            opened[0].close()  # nothing will use it
        _end_early_probes()
        raise
    opener.join()
    db = opened[0]
    if isinstance(db, BaseException):
        _end_early_probes()
        raise db
    try:
        services = build_services(db, paths.data_dir)
        for name in _PANEL_MODULES:
            importlib.import_module(name)
    except BaseException:
        db.close()
        raise
    finally:
        _end_early_probes()
    return services


def _end_early_probes() -> None:
    # The CLI tools' detection took the early answers, or start-up failed before it: none may
    # be taken by a later detection (they would be stale by then).
    try:
        from app.core.tools.providers.cli import end_early_probes
    except Exception:  # nothing was probed: the import failed there too
        return
    end_early_probes()


def _fatal(message: str, headless: bool, window: QWidget | None = None) -> None:
    print(message, file=sys.stderr)
    if headless:
        return
    from PySide6.QtWidgets import QMessageBox

    QMessageBox.critical(window, APP_NAME, message)


if __name__ == "__main__":
    raise SystemExit(main())



