"""Progressive start: the window shell appears first, the services fill it in afterwards."""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QApplication, QLabel

from app.core.config import resolve_paths
from app.main import show_window
from app.startup_threads import load_services
from app.ui.ai_panel.panel import AIPanel
from app.ui.main_window import MainWindow
from app.ui.widgets.tools_panel import ToolsPanel
from app.ui.window_placement import first_start_size
from tests.ui.conftest import wait_for


def _actions(window: MainWindow) -> dict[str, bool]:
    found = {}
    for menu_action in window.menuBar().actions():
        for action in menu_action.menu().actions():
            if action.text() and not action.isSeparator():
                found[action.text().replace("&", "")] = action.isEnabled()
    return found


def test_shell_has_the_chrome_but_nothing_that_needs_services(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    actions = _actions(window)
    assert actions["Settings…"] is False and actions["New Conversation"] is False
    assert actions["Open Folder…"] is False and actions["Open Recent"] is False
    assert actions["Quit"] is True and actions["Tools"] is True
    profiles = window.profiles
    assert not profiles.model_picker.isEnabled() and not profiles.profile_picker.isEnabled()
    assert isinstance(window.tabs.widget(0), QLabel)
    assert isinstance(window.tools_dock.widget(), QLabel)
    assert window.status_label.text() == "Starting…"
    assert window.close()  # closing while starting needs nothing from the services


def test_attach_services_fills_the_shell_in(qtbot, services, project):
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.ready, timeout=5000):
        window.attach_services(services, project)
    assert window.tabs.count() == 2
    assert isinstance(window.tabs.widget(0), AIPanel)
    assert isinstance(window.tools_dock.widget(), ToolsPanel)
    assert all(item.isEnabled() for item in window._needs_services)
    profiles = window.profiles
    assert profiles.model_picker.isEnabled() and profiles.profile_picker.currentText() == "Default"
    assert window.status_label.text() == "Ready"
    assert window.windowTitle() == f"{project.name} — Tebiki"


def test_saved_size_is_restored_before_the_store_opens(qtbot, fresh_data_dir, project):
    QApplication.instance().setQuitOnLastWindowClosed(False)
    paths = resolve_paths(fresh_data_dir)
    services = load_services(paths)
    first = MainWindow(services=services, project_root=project)
    qtbot.addWidget(first)
    first.show()
    first.resize(790, 520)  # within the offscreen screen (800x600): restoreGeometry clamps
    QApplication.processEvents()
    assert first.close()  # saves geometry and dock layout to the settings table
    services.db.close()

    second = show_window(paths)  # as app.main: no services yet
    qtbot.addWidget(second)
    assert second.services is None
    assert (second.width(), second.height()) == (790, 520)
    second.close()


async def test_first_keystroke_prepares_runs_once(qtbot, services, project, monkeypatch):
    import app.core.warmup as warmup

    calls: list[str] = []

    async def fake_warm_up(names=warmup.RUN_MODULES):
        calls.append("warm_up")
        return 0.0

    monkeypatch.setattr(warmup, "warm_up", fake_warm_up)
    window = MainWindow(services=services, project_root=project)
    qtbot.addWidget(window)

    async def fake_refresh() -> None:
        calls.append("models")

    monkeypatch.setattr(window.profiles, "refresh_models", fake_refresh)
    with qtbot.waitSignal(window.ai_panel.writing_started, timeout=2000):
        qtbot.keyClicks(window.ai_panel.prompt, "li")
    qtbot.keyClicks(window.ai_panel.prompt, "st files")
    await wait_for(lambda: calls == ["warm_up", "models"])
    await asyncio.sleep(0.05)
    assert calls == ["warm_up", "models"]


def test_damaged_saved_layout_is_ignored(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    window.restore_layout({"ui.geometry": "not base64!!", "ui.state": "AAAA", "x": 1})
    window.restore_layout({"ui.geometry": 12, "ui.state": None})
    assert window.size() == first_start_size(window.screen())


def test_recent_folders_are_listed_remembered_and_not_rewritten(qtbot, services, tmp_path):
    folders = [(tmp_path / f"p{i}").resolve() for i in range(10)]
    for folder in folders:
        folder.mkdir()
    window = MainWindow(services=services, project_root=folders[0])
    qtbot.addWidget(window)
    for folder in folders[1:]:
        window.folders.open(folder)
    listed = [a.text() for a in window.menus.recent_menu.actions()]
    assert listed == [str(f) for f in reversed(folders)][:8]  # newest first, capped

    window.folders.open(folders[3])  # an older one moves to the top
    assert window.menus.recent_menu.actions()[0].text() == str(folders[3])

    def stamp() -> str:
        return services.db.conn.execute(
            "SELECT updated_at FROM settings WHERE key = 'ui.recent_folders'").fetchone()[0]

    before = stamp()
    window.folders.open(folders[3])  # already first: nothing to write
    assert stamp() == before

    folders[3].rmdir()  # the last folder is gone: the next one that exists is opened
    again = MainWindow(services=services)
    qtbot.addWidget(again)
    assert again.project_root == folders[9]
    assert again.windowTitle() == "p9 — Tebiki"


def test_ready_before_the_tools_then_the_tools_attach(qtbot, db, fresh_data_dir, project):
    from app.core.services import build_store_services

    services = build_store_services(db, fresh_data_dir)
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.ready, timeout=5000):
        window.attach_services(services, project)
    # Ready: the person can type and Send; the tools list and tool history follow.
    assert isinstance(window.tabs.widget(0), AIPanel)
    assert window.ai_panel.prompt.isEnabled() and window.ai_panel.send_button.isEnabled()
    assert isinstance(window.tools_dock.widget(), QLabel)
    assert isinstance(window.tabs.widget(1), QLabel)
    assert not any(item.isEnabled() for item in window._needs_services)
    assert window.status_label.text() == "Loading tools…"
    assert window.windowTitle() == f"{project.name} — Tebiki"  # the folder is known at ready
    assert services.tools_built is False

    services.build_tools()
    with qtbot.waitSignal(window.tools_attached, timeout=5000):
        window.tools_built.emit("")  # as app.main's worker thread does
    assert isinstance(window.tools_dock.widget(), ToolsPanel)
    assert all(item.isEnabled() for item in window._needs_services)
    assert window.status_label.text() == "Ready"
    assert window.windowTitle() == f"{project.name} — Tebiki"
    assert services.permissions.project_root == project


def test_tools_built_after_the_window_closed_are_not_attached(qtbot, db, fresh_data_dir,
                                                              project):
    # Quitting early: the tools thread finishes while the app shuts its services down. Nothing
    # may be built into the closed window, nor may it start the MCP servers (tools_attached).
    from app.core.services import build_store_services

    services = build_store_services(db, fresh_data_dir)
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    window.attach_services(services, project)
    assert window.close()
    services.build_tools()
    attached: list[bool] = []
    window.tools_attached.connect(lambda: attached.append(True))
    window.tools_built.emit("")
    qtbot.wait(20)
    assert attached == []
    assert isinstance(window.tools_dock.widget(), QLabel)  # still the placeholder


def test_tools_that_fail_to_build_are_reported(qtbot, db, fresh_data_dir):
    from app.core.services import build_store_services

    window = MainWindow()
    qtbot.addWidget(window)
    window.attach_services(build_store_services(db, fresh_data_dir), None)
    window.tools_built.emit("no such module: app.core.tools.builtin")
    assert window.status_label.text() == ("The tools could not be loaded: "
                                          "no such module: app.core.tools.builtin")
    assert isinstance(window.tools_dock.widget(), QLabel)


def test_finish_start_builds_the_tools_in_a_worker_thread(qtbot, db, fresh_data_dir, project,
                                                         monkeypatch):
    import threading

    import app.main as app_main
    import app.startup_threads as startup_threads
    import app.ui.deferred_imports as deferred_imports
    from app.core.services import build_store_services

    services = build_store_services(db, fresh_data_dir)
    threads: list[str] = []
    original = services._build_tools

    def recording_build():
        threads.append(threading.current_thread().name)
        return original()

    monkeypatch.setattr(services, "_build_tools", recording_build)
    monkeypatch.setattr(deferred_imports, "DEFERRED_UI_MODULES", ())
    monkeypatch.setattr(startup_threads, "DEFERRED_AGENT_MODULES", ())
    window = MainWindow()
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.tools_attached, timeout=20000):
        app_main.finish_start(window, services, project)
        assert services.tools_built is False  # ready first
    assert threads == ["tebiki-tools"]
    assert isinstance(window.tools_dock.widget(), ToolsPanel)


def test_the_ready_paint_leaves_the_persons_input_for_the_event_loop(qtbot, db, fresh_data_dir,
                                                                   project, monkeypatch):
    # show_ready paints before the event loop runs (app.main.run_event_loop): a Send clicked or
    # a key typed then must wait in Qt's queue, not reach a panel that has no loop to run it on.
    from PySide6.QtCore import QCoreApplication, QEventLoop

    import app.main as app_main
    from app.core.services import build_store_services

    monkeypatch.setattr(app_main, "_AFTER_READY_DELAY_MS", 600_000)  # no tools build here
    passes: list[tuple[object, ...]] = []
    monkeypatch.setattr(QCoreApplication, "processEvents",
                        staticmethod(lambda *flags: passes.append(flags)))
    window = MainWindow()
    qtbot.addWidget(window)
    app_main.show_ready(window, build_store_services(db, fresh_data_dir), project)
    assert isinstance(window.ai_panel, AIPanel)
    assert passes == [(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents,)]


async def test_the_prompt_has_the_keyboard_once_ready(qtbot, services, project, monkeypatch):
    # Before, nothing had the focus at start: what a person typed went nowhere until they clicked
    # into the prompt.
    import app.core.warmup as warmup

    window = MainWindow()
    qtbot.addWidget(window)

    # The first keystroke's preparations: not tested here.
    monkeypatch.setattr(warmup, "warm_up", lambda *names: _nothing())
    monkeypatch.setattr(window.profiles, "refresh_models", _nothing)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    window.attach_services(services, project)
    await wait_for(lambda: QApplication.focusWidget() is window.ai_panel.prompt)
    qtbot.keyClicks(QApplication.focusWidget(), "hello")
    assert window.ai_panel.prompt.toPlainText() == "hello"


async def _nothing() -> None:
    return None


def test_waiting_for_the_services_leaves_the_persons_input_for_the_event_loop(monkeypatch):
    # Keys typed while the shell waits reach the prompt once it exists, not the shell.
    from concurrent.futures import Future

    from PySide6.QtCore import QCoreApplication, QEventLoop

    import app.main as app_main

    loading: Future[object] = Future()
    passes: list[tuple[object, ...]] = []

    def process_events(*flags: object) -> None:
        passes.append(flags)
        if len(passes) == 3:
            loading.set_result("services")

    monkeypatch.setattr(QCoreApplication, "processEvents", staticmethod(process_events))
    app_main.wait_painting(loading)  # type: ignore[arg-type]
    assert passes == [(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents,)] * 3
