"""The GUI thread's deferred imports (app.ui.deferred_imports) start once the worker has loaded
the agent's modules they depend on (app.startup_threads), so each turn imports only its own."""

from __future__ import annotations

import pytest

from app.startup_threads import DEFERRED_AGENT_MODULES
from app.ui.deferred_imports import DEFERRED_UI_MODULES
from tests.unit.test_startup_path import _loaded, _run


@pytest.mark.parametrize("tools_before_ready", [False, True])
def test_the_agents_modules_are_in_before_the_gui_thread_imports_the_dialogs(
        tmp_path, tools_before_ready):
    # The dialogs import the agent's events: when the worker imported those only after telling
    # the window (which then starts the GUI thread's deferred imports), both threads imported
    # them at once: the GUI thread waited for the worker's import locks, then imported its
    # share itself, a stall of ~100 ms right after ready. Services whose tools were built before
    # ready (as the stall benchmark's) had the window start them at ready.
    result = _run(f"""
        import json, sys, time
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        from app.core.config import resolve_paths
        import app.main as app_main
        app_main._AFTER_READY_DELAY_MS = 0
        window, loading = app_main.open_window(resolve_paths())
        app_main.wait_painting(loading)
        at_emit = []  # sys.modules when the worker emits, in the worker (a direct connection)
        window.tools_built.connect(lambda _problem: at_emit.append(sorted(sys.modules)),
                                   Qt.ConnectionType.DirectConnection)
        services = loading.result()
        if {tools_before_ready!r}:
            services.build_tools()
        app_main.show_ready(window, services, None)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not at_emit:
            app.processEvents()
            time.sleep(0.005)
        print(json.dumps({{"at_emit": at_emit[0] if at_emit else None}}))
    """, tmp_path)
    assert result["at_emit"] is not None
    assert _loaded(result["at_emit"], DEFERRED_AGENT_MODULES) == sorted(DEFERRED_AGENT_MODULES)
    assert "app.core.agent.events" in result["at_emit"]
    assert _loaded(result["at_emit"], DEFERRED_UI_MODULES) == []  # the GUI's turns follow
