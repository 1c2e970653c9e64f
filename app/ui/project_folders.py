"""The main window's project folder: choosing and opening it (the tools work inside it, the
title and toolbar name it) and the recent folders under File → Open Recent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QLabel, QMainWindow, QMenu

from app.core.config import APP_NAME
from app.core.settings_fields import RECENT_FOLDERS

if TYPE_CHECKING:
    from app.core.services import Services
    from app.ui.task_set import TaskSet

MAX_RECENT = 8


class ProjectFolders:
    """``root``: the open project folder (None: none is open). The window's title and
    ``label`` name it; ``recent_menu`` lists the last ``MAX_RECENT``.

    ``opened`` is called with each folder opened (the panels follow it), ``tools_loaded`` once
    its own tools (.tebiki/tools.toml) are read."""

    def __init__(self, window: QMainWindow, label: QLabel, recent_menu: QMenu,
                 services: Callable[[], Services], *, opened: Callable[[Path | None], None],
                 tools_loaded: Callable[[Path | None], None]) -> None:
        self._window = window
        self._label = label
        self._recent_menu = recent_menu
        self._services = services
        self._opened = opened
        self._tools_loaded = tools_loaded
        self.root: Path | None = None
        self._tasks: TaskSet | None = None

    def start_with(self, root: Path | None) -> None:
        """The folder known when the services are attached (``root``, else the last one
        opened): a Send uses it at once; ``open`` opens it fully once the tools are there."""
        root = root or self._last_project()
        self.root = root.resolve() if root is not None and root.is_dir() else None
        self._services().set_project_root(self.root)
        self.show()

    def choose(self) -> None:
        from PySide6.QtWidgets import QFileDialog  # here: the ready window shows none

        start = str(self.root or Path.home())
        chosen = QFileDialog.getExistingDirectory(self._window, "Open project folder", start)
        if chosen:
            self.open(Path(chosen))

    def show(self) -> None:
        """The open folder in the title and the toolbar (known at ready, before the tools)."""
        name = self.root.name if self.root else None
        self._window.setWindowTitle(f"{name} — {APP_NAME}" if name else APP_NAME)
        self._label.setText(f"Project: {self.root}  " if self.root
                            else "No project folder — File → Open Folder…  ")

    def open(self, root: Path | None) -> None:
        if root is not None and not root.is_dir():
            root = None
        self.root = root.resolve() if root is not None else None
        self._load_tools(self.root)
        self._opened(self.root)
        self.show()
        if self.root is not None:
            settings = self._services().settings
            saved = list(settings.read(RECENT_FOLDERS))
            recent = ([str(self.root)] + [p for p in saved if p != str(self.root)])[:MAX_RECENT]
            if recent != saved:  # reopening the last folder at start-up writes nothing
                settings.write(RECENT_FOLDERS, tuple(recent))
                self.refresh_recent()

    def _load_tools(self, root: Path | None) -> None:
        """The project's own .tebiki/tools.toml may add tools: read in a worker thread on the
        event loop (before the loop runs, at start-up, here and now)."""
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._services().set_project_root(root)
            self._tools_loaded(root)
            return
        if self._tasks is None:
            from app.ui.task_set import TaskSet

            self._tasks = TaskSet("opening the project's tools", lambda _error: None)
        self._tasks.run(self._open_tools(root))

    async def _open_tools(self, root: Path | None) -> None:
        await self._services().open_project(root)
        if root == self.root:  # not overtaken by a newer folder
            self._tools_loaded(root)

    def _last_project(self) -> Path | None:
        for path in self._services().settings.read(RECENT_FOLDERS):
            if Path(path).is_dir():
                return Path(path)
        return None

    def refresh_recent(self) -> None:
        self._recent_menu.clear()
        folders = self._services().settings.read(RECENT_FOLDERS)
        for folder in folders:
            action = self._recent_menu.addAction(folder)
            action.triggered.connect(lambda _=False, f=folder: self.open(Path(f)))
        self._recent_menu.setEnabled(bool(folders))
