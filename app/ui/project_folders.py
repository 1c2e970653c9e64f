"""The main window's project folder: choosing and opening it (the tools work inside it, the
title and toolbar name it) and the recent folders under File → Open Recent."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QLabel, QMenu

from app.core.config import APP_NAME
from app.core.settings_fields import RECENT_FOLDERS

if TYPE_CHECKING:
    # Type-checked as the window it is mixed into; at run time a plain mixin.
    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QMainWindow as _Window

    from app.core.services import Services
    from app.ui.task_set import TaskSet
    from app.ui.widgets.ai_panel import AIPanel
    from app.ui.widgets.tools_panel import ToolsPanel
else:
    _Window = object

MAX_RECENT = 8


class ProjectFolders(_Window):
    """Mixin of MainWindow: the open project folder and the recent ones."""

    project_root: Path | None
    project_label: QLabel
    recent_menu: QMenu
    ai_panel: AIPanel
    tools_panel: ToolsPanel
    project_tools_loaded: SignalInstance
    _project_tasks: TaskSet | None = None

    if TYPE_CHECKING:
        @property
        def live_services(self) -> Services: ...

    def choose_project(self) -> None:
        from PySide6.QtWidgets import QFileDialog  # here: the ready window shows none

        start = str(self.project_root or Path.home())
        chosen = QFileDialog.getExistingDirectory(self, "Open project folder", start)
        if chosen:
            self.open_project(Path(chosen))

    def show_project(self) -> None:
        """The open folder in the title and the toolbar (known at ready, before the tools)."""
        name = self.project_root.name if self.project_root else None
        self.setWindowTitle(f"{name} — {APP_NAME}" if name else APP_NAME)
        self.project_label.setText(f"Project: {self.project_root}  " if self.project_root
                                   else "No project folder — File → Open Folder…  ")

    def open_project(self, root: Path | None) -> None:
        if root is not None and not root.is_dir():
            root = None
        self.project_root = root.resolve() if root is not None else None
        self._load_project_tools(self.project_root)
        if self.ai_panel.session is not None and not self.ai_panel.running:
            self.ai_panel.new_conversation()
        self.ai_panel.project_opened(self.project_root)  # prunes old checkpoints, hourly
        self.show_project()
        if self.project_root is not None:
            saved = list(self.live_services.settings.read(RECENT_FOLDERS))
            recent = ([str(self.project_root)] +
                      [p for p in saved if p != str(self.project_root)])[:MAX_RECENT]
            if recent != saved:  # reopening the last folder at start-up writes nothing
                self.live_services.settings.write(RECENT_FOLDERS, tuple(recent))
                self._refresh_recent()

    def _load_project_tools(self, root: Path | None) -> None:
        """The project's own .tebiki/tools.toml may add tools: read in a worker thread on the
        event loop (before the loop runs, at start-up, here and now)."""
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.live_services.set_project_root(root)
            self._project_tools_loaded(root)
            return
        if self._project_tasks is None:
            from app.ui.task_set import TaskSet

            self._project_tasks = TaskSet("opening the project's tools", lambda _error: None)
        self._project_tasks.run(self._open_project_tools(root))

    async def _open_project_tools(self, root: Path | None) -> None:
        await self.live_services.open_project(root)
        if root == self.project_root:  # not overtaken by a newer folder
            self._project_tools_loaded(root)

    def _project_tools_loaded(self, root: Path | None) -> None:
        self.tools_panel.project_root = root
        self.tools_panel.rebuild()
        self.project_tools_loaded.emit()

    def _last_project(self) -> Path | None:
        for path in self.live_services.settings.read(RECENT_FOLDERS):
            if Path(path).is_dir():
                return Path(path)
        return None

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        folders = self.live_services.settings.read(RECENT_FOLDERS)
        for folder in folders:
            action = self.recent_menu.addAction(folder)
            action.triggered.connect(lambda _=False, f=folder: self.open_project(Path(f)))
        self.recent_menu.setEnabled(bool(folders))
