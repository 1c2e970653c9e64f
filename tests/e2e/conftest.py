"""End-to-end fixtures: the real main window, a fake Anthropic server on 127.0.0.1."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest

from tests.fakes.anthropic_server import fake_anthropic, fake_anthropic_env  # noqa: F401
from tests.ui.conftest import memory_keyring, pytest_asyncio_loop_factories  # noqa: F401

if TYPE_CHECKING:
    from app.ui.main_window import MainWindow


@contextlib.asynccontextmanager
async def shown_window(qtbot, services, project) -> AsyncIterator[MainWindow]:
    """The main window over ``services`` for ``project``, shown; closed cleanly after."""
    from PySide6.QtWidgets import QApplication

    from app.ui.main_window import MainWindow

    # The test closes windows while its own loop keeps running; the app would quit here.
    QApplication.instance().setQuitOnLastWindowClosed(False)
    win = MainWindow(services=services, project_root=project)
    qtbot.addWidget(win)
    win.parallel_runs.confirm_quit = lambda _question: True  # "N runs are working; quit?"
    win.show()
    try:
        yield win
    finally:
        # Close the session's HTTP client on this test's loop, before the loop goes away.
        await win.ai_panel.shutdown()
        await services.aclose()


@pytest.fixture
async def window(qtbot, db, fresh_data_dir, project, fake_anthropic_env):  # noqa: F811
    from app.core.services import build_services
    from app.core.store.profiles import ToolSetting

    services = build_services(db, fresh_data_dir, project)
    profile_id = services.profiles.ensure_default().id
    services.profiles.set_tool(profile_id, ToolSetting("write_file", True,
                                                       {"allowed_write_dirs": ["doc"]}))
    async with shown_window(qtbot, services, project) as win:
        yield win
