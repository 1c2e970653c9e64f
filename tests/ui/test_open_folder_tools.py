"""File → Open Folder reads the project's .tebiki/tools.toml off the GUI thread, and a FIFO
there neither freezes the window nor loads anything (it is reported)."""

from __future__ import annotations

import threading
from pathlib import Path

from app.core.tools.providers.custom import CustomToolsProvider
from app.ui.main_window import MainWindow
from tests.fifo_support import Fifos
from tests.ui.conftest import wait_for

TOOL = '[hello]\ndescription = "Say hello"\ncommand = "echo hello"\n'


async def open_folder(window: MainWindow, folder: Path) -> None:
    loaded: list[bool] = []
    window.project_tools_loaded.connect(lambda: loaded.append(True))
    window.folders.open(folder)
    await wait_for(lambda: bool(loaded))


async def test_a_fifo_tools_toml_does_not_freeze_open_folder(
        qtbot, services, tmp_path: Path, make_fifo: Fifos) -> None:
    window = MainWindow(services=services)
    qtbot.addWidget(window)
    await wait_for(lambda: window._tools_attached)
    folder = (tmp_path / "hostile").resolve()
    make_fifo(folder / ".tebiki" / "tools.toml")
    with make_fifo.on_this_thread():
        window.folders.open(folder)  # returns at once: the file is read in a worker
    await wait_for(lambda: any("FIFO" in e for e in services.tool_notices()))
    custom = services.custom_tools
    assert custom is not None and custom.project_root == folder
    assert not custom.tools()


async def test_the_project_tools_are_read_off_the_gui_thread(
        qtbot, services, tmp_path: Path, monkeypatch) -> None:
    window = MainWindow(services=services)
    qtbot.addWidget(window)
    await wait_for(lambda: window._tools_attached)
    folder = (tmp_path / "proj").resolve()
    (folder / ".tebiki").mkdir(parents=True)
    (folder / ".tebiki" / "tools.toml").write_text(TOOL)
    readers: list[threading.Thread] = []
    real = CustomToolsProvider.set_project_root

    def recording(self: CustomToolsProvider, root: object) -> list[str]:
        readers.append(threading.current_thread())
        return real(self, root)  # type: ignore[arg-type]

    monkeypatch.setattr(CustomToolsProvider, "set_project_root", recording)
    await open_folder(window, folder)
    assert readers and all(t is not threading.main_thread() for t in readers)
    assert "hello" in services.registry.names()
    assert window.tools_panel.project_root == folder
