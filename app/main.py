"""Entry point: QApplication + qasync event loop + main window."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from app.core.config import APP_ID, APP_NAME, resolve_paths, resolve_project_root

log = logging.getLogger("tebiki")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=APP_ID, description="Tebiki, a desktop AI agent "
                                     "workbench")
    parser.add_argument("--data-dir", help="where the database and logs live "
                        "(default: $TEBIKI_DATA_DIR or the platform's user data dir)")
    parser.add_argument("--project", help="project folder to open (default: "
                        "$TEBIKI_PROJECT_ROOT)")
    parser.add_argument("--smoke-test", action="store_true",
                        help="start offscreen, build the main window, exit 0 (packaging check)")
    # Qt may add its own arguments (e.g. -platform); leave those to QApplication.
    args, _unknown = parser.parse_known_args(argv)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.smoke_test:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        if not args.data_dir and not os.environ.get("TEBIKI_DATA_DIR"):
            import tempfile

            args.data_dir = tempfile.mkdtemp(prefix="tebiki-smoke-")
    paths = resolve_paths(args.data_dir)
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[logging.FileHandler(paths.log_file, encoding="utf-8"),
                  logging.StreamHandler()],
    )

    import qasync
    from PySide6.QtWidgets import QApplication

    from app.core.store.db import open_database
    from app.ui.gc_guard import MainThreadGarbageCollector
    from app.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0]])
    garbage_collector = MainThreadGarbageCollector(app)
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setDesktopFileName(APP_ID)
    from app.resources import app_icon

    app.setWindowIcon(app_icon())

    try:
        db = open_database(paths.database)
    except Exception as exc:  # say why instead of dying silently
        log.exception("cannot open the database")
        _fatal(f"Tebiki cannot open its database at {paths.database}:\n{exc}", args.smoke_test)
        return 1

    from app.core.services import build_services

    services = build_services(db, paths.data_dir)
    window = MainWindow(services=services, project_root=resolve_project_root(args.project))
    window.show()

    async def run_until_closed() -> int:
        from app.core.warmup import HEAVY_MODULES, warm_up

        # We end the loop ourselves after cleaning up, not Qt when the last window closes.
        app.setQuitOnLastWindowClosed(False)
        closed = asyncio.get_running_loop().create_future()

        def on_closed() -> None:
            if not closed.done():
                closed.set_result(None)

        app.lastWindowClosed.connect(on_closed)
        app.aboutToQuit.connect(on_closed)
        # Window is up: import the SDK meanwhile (not for --smoke-test, which only checks the
        # window and must not wait seconds for imports it will never use).
        warming = asyncio.ensure_future(warm_up(() if args.smoke_test else HEAVY_MODULES))
        mcp_start = asyncio.ensure_future(services.start_mcp())
        models = None
        if args.smoke_test:
            await asyncio.sleep(0.2)
            window.close()
        else:
            await warming  # the SDK is imported: now ask the API which models it offers
            models = asyncio.ensure_future(window.refresh_models())
        await closed
        if models is not None:
            models.cancel()
        # Nothing pending may run after the window is gone; then release network clients.
        await warming
        await window.ai_panel.shutdown()
        mcp_start.cancel()
        await services.aclose()
        return 0

    from app.ui import crash

    try:
        with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
            loop = runner.get_loop()
            # Plain worker threads for asyncio.to_thread (database, SDK import), not QThreads.
            loop.set_default_executor(ThreadPoolExecutor(max_workers=4,
                                                         thread_name_prefix="tebiki-worker"))
            crash.install(loop)
            code = runner.run(run_until_closed())
    finally:
        garbage_collector.stop()
        db.close()
    if args.smoke_test:
        print(f"smoke test ok: window {window.windowTitle()!r}, data dir {paths.data_dir}")
    return code


def _fatal(message: str, headless: bool) -> None:
    print(message, file=sys.stderr)
    if headless:
        return
    from PySide6.QtWidgets import QMessageBox

    QMessageBox.critical(None, APP_NAME, message)


if __name__ == "__main__":
    raise SystemExit(main())



