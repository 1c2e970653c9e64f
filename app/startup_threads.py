"""The start-up's work off the GUI thread: the store and the panel's modules load in a worker
while the window shell paints (``start_loading_services``); after ready, another builds the
tools part of the services and imports what the panels open later (``start_tools_build``).
Quitting waits for all of them (``join_startup_threads``). No Qt here: the window is handed
in, and reached only through its queued signal."""

from __future__ import annotations

import importlib
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import Future

    from app.core.config import AppPaths
    from app.core.services import Services
    from app.core.store.db import Database
    from app.ui.main_window import MainWindow

log = logging.getLogger("tebiki")

# Modules the ready window needs, imported in the worker too, so the GUI thread only builds
# widgets. The tools list and the tool history come after ready (MainWindow.attach_tools).
PANEL_MODULES = ("app.ui.ai_panel.panel", "app.ui.approval_queue", "app.ui.parallel_runs",
                 "app.ui.worktree_runs")
# What MainWindow.attach_tools imports (MCP's server requests and sign-in; the project's
# checkpoint engine, which opening the project loads): imported with the tools, so attaching
# them on the GUI thread imports nothing.
TOOLS_UI_MODULES = ("app.ui.server_requests", "app.ui.controllers.mcp_settings",
                    "app.ui.widgets.history_view", "app.ui.widgets.tools_panel",
                    "app.core.agent.checkpointing")
# What Send needs that the panel imports on first use: the agent's session (and its tool loop).
# The ready window has not loaded it (app.core.agent loads its parts lazily); this warm-up, like
# the one the first keystroke starts, keeps a Send from waiting for it (AIPanel._first_run).
# With it, what the deferred dialogs import from app.core (the agent's events, the rule
# suggestions), so the GUI thread's import turns (app.ui.deferred_imports) are only their own.
DEFERRED_AGENT_MODULES = ("app.core.agent.session", "app.core.permissions.suggestions")


# The start-up threads (the tools build and its probes): quitting waits for them, so the
# database is never closed, nor the interpreter finalised, under a thread still using them.
_startup_threads: list[threading.Thread] = []


def _start_thread(target: Callable[..., None], *args: object, name: str) -> None:
    thread = threading.Thread(target=target, args=args, daemon=True, name=name)
    _startup_threads.append(thread)
    thread.start()


def join_startup_threads(timeout_s: float) -> bool:
    """Wait for the start-up threads; False if one is still running after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    index = 0
    while index < len(_startup_threads):  # a joined thread may have started another
        _startup_threads[index].join(max(0.0, deadline - time.monotonic()))
        index += 1
    return not any(t.is_alive() for t in _startup_threads)


def start_tools_build(window: MainWindow, services: Services) -> None:
    """After ready: build the tools part of the services, then warm the deferred imports up, in
    a thread of its own (``MainWindow.tools_built`` tells the window)."""
    _start_thread(_build_tools_then_warm_up, window, services, name="tebiki-tools")


def _build_tools_then_warm_up(window: MainWindow, services: Services) -> None:
    from app.core.warmup import holding_imports, import_all

    # The probes wait for programs (bubblewrap, rg, fd) while this thread imports the tools.
    _start_thread(_probe_sandbox, name="tebiki-sandbox-probe")
    problem = ""
    try:
        with holding_imports():  # the GUI thread's collector waits for the imports
            services.build_tools()
    except Exception as exc:  # the window says so; a Send tries again (Services.build_tools)
        log.exception("building the tools failed")
        problem = str(exc) or type(exc).__name__
    finally:
        _end_early_probes()
    import_all(TOOLS_UI_MODULES)  # MainWindow.attach_tools imports these
    # The UI's modules are imported on the GUI thread (app.ui.deferred_imports: defining a Qt
    # widget class here raced with painting), starting when the tools are attached; the agent's
    # have no Qt and load here, first. Imported after that signal instead, they were loaded by
    # both threads at once: the dialogs import the agent's events, so the GUI thread waited for
    # this thread's import locks, then imported their share itself (~100 ms of stall).
    import_all(DEFERRED_AGENT_MODULES)
    try:
        window.tools_built.emit(problem)  # queued: attach_tools runs on the GUI thread
    except RuntimeError:  # the window is gone (quit while starting)
        return


def _probe_sandbox() -> None:
    # The sandbox probe runs a program (bubblewrap, ~10 ms of waiting); building the tools
    # waits for this result (app.core.sandbox.status caches it) instead of probing itself.
    try:
        from app.core.sandbox.status import sandbox_status

        sandbox_status()
    except Exception:  # build_services probes again and reports it
        log.exception("sandbox probe failed")
    # Then the CLI tools' `--version` probes (rg, fd): the first detection, in build_services,
    # takes their answers.
    try:
        from app.core.tools.providers.cli_detect import probe_versions_early

        probe_versions_early()
    except Exception:  # the detection probes again and reports it
        log.exception("CLI version probe failed")


def start_loading_services(paths: AppPaths) -> Future[Services]:
    """``load_services`` in a thread of its own, started before the window's first paint.

    The paint is Qt's own work with the GIL released (tens of ms: fonts, style, layout), so the
    imports of the store and the panel run beside it on another core instead of after it. The
    future holds the services or the exception that stopped them (a DatabaseError says why)."""
    from concurrent.futures import Future

    future: Future[Services] = Future()

    def load() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(load_services(paths))
        except BaseException as exc:  # main() raises it where it takes the result
            future.set_exception(exc)

    _start_thread(load, name="tebiki-services")
    return future


def _open_store(paths: AppPaths, opened: list[Database | BaseException]) -> None:
    try:
        from app.core.store.db import open_database

        opened.append(open_database(paths.database))
    except BaseException as exc:  # load_services raises it
        opened.append(exc)


def load_services(paths: AppPaths) -> Services:
    """Open (create, migrate) the database and build the store's part of the services (the
    tools part follows after ready: ``start_tools_build``). Runs in a worker thread: it is mostly
    imports, and the window is already up. Beside it, in a thread of its own, the database
    opens (its writes wait for the disk) while this thread imports the panel's modules."""
    opened: list[Database | BaseException] = []
    opener = threading.Thread(target=_open_store, args=(paths, opened), daemon=True,
                              name="tebiki-store-open")
    opener.start()
    try:
        from app.core.services import build_store_services

        for name in PANEL_MODULES:  # while the database opens
            importlib.import_module(name)
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
        return build_store_services(db, paths.data_dir)
    except BaseException:
        db.close()
        _end_early_probes()
        raise


def _end_early_probes() -> None:
    # The CLI tools' detection took the early answers, or start-up failed before it: none may
    # be taken by a later detection (they would be stale by then).
    try:
        from app.core.tools.providers.cli_detect import end_early_probes
    except Exception:  # nothing was probed: the import failed there too
        return
    end_early_probes()
