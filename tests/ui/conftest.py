"""UI fixtures: services on a fresh database, and an in-memory keyring (never the user's)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend

from app.core.services import Services, build_services


class MemoryKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.values.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.values[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        from keyring.errors import PasswordDeleteError

        if (service, username) not in self.values:
            raise PasswordDeleteError(username)
        del self.values[(service, username)]


@pytest.fixture(autouse=True)
def memory_keyring() -> MemoryKeyring:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def services(db, fresh_data_dir: Path, project: Path) -> Services:
    return build_services(db, fresh_data_dir, project)


def make_ai_panel(qtbot, services: Services, project: Path | None, *,
                  size: tuple[int, int] | None = None, show: bool = False):
    """An AIPanel on the default profile with its own approval queue (parented to a host
    widget the test owns), shown at ``size`` when ``show``."""
    from PySide6.QtWidgets import QWidget

    from app.ui.ai_panel.panel import AIPanel
    from app.ui.approval_queue import ApprovalQueue

    host = QWidget()
    qtbot.addWidget(host)
    profile = services.profiles.ensure_default()
    assert profile.id is not None
    panel = AIPanel(services, profile.id, ApprovalQueue(host, lambda: project), lambda: project)
    qtbot.addWidget(panel)
    if size is not None:
        panel.resize(*size)
    if show:
        panel.show()
    return panel


def pytest_asyncio_loop_factories(config, item):
    """Async UI tests run on a qasync loop, so Qt timers and signals work inside coroutines."""

    def qasync_loop():
        import qasync
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance() or QApplication([])
        loop = qasync.QEventLoop(app)
        # Plain threads for to_thread(): qasync's default executor is QThread-based, and a
        # QThread collected while running takes the process down.
        loop.set_default_executor(ThreadPoolExecutor(max_workers=4))
        return loop

    return {"qasync": qasync_loop}


async def wait_for(condition, timeout: float = 10.0) -> None:
    """Await until ``condition()`` is true while the qasync loop keeps Qt responsive."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        await asyncio.sleep(0.005)
