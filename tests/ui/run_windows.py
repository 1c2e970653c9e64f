"""The real window for the parallel-runs tests: write_file allowed under doc/ (asked), and
closing it at the end stops every run without asking."""

from __future__ import annotations

from pathlib import Path

from app.core.services import Services
from app.core.store.profiles import ToolSetting
from app.ui.main_window import MainWindow


def run_window(qtbot, services: Services, project: Path) -> MainWindow:
    profile = services.profiles.ensure_default()
    assert profile.id is not None
    services.profiles.set_tool(profile.id, ToolSetting("write_file", True,
                                                   {"allowed_write_dirs": ["doc"]}))
    window = MainWindow(services=services, project_root=project)
    qtbot.addWidget(window)
    window.parallel_runs.confirm_quit = lambda _question: True
    window.show()
    qtbot.waitExposed(window)
    return window
