"""The main window's menu bar: File (open folder, recent folders, new conversation, quit), Edit
(settings), Run (stop), View (tools dock, tool history) and Help."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMessageBox, QTabWidget, QWidget

from app.core.config import APP_NAME

if TYPE_CHECKING:
    # Type-checked as the window it is mixed into; at run time a plain mixin.
    from PySide6.QtWidgets import QMainWindow as _Window

    from app.core.services import Services
    from app.ui.dialogs.settings import SettingsDialog
    from app.ui.widgets.ai_panel import AIPanel
else:
    _Window = object


class WindowMenus(_Window):
    """Mixin of MainWindow: builds the menus; their actions call the window."""

    services: Services | None
    tabs: QTabWidget
    tools_dock: QDockWidget
    ai_panel: AIPanel
    _needs_services: list[QAction | QWidget]

    if TYPE_CHECKING:
        def choose_project(self) -> None: ...
        def open_settings(self) -> SettingsDialog: ...

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        open_action = QAction("&Open Folder…", self,
                              shortcut=QKeySequence(QKeySequence.StandardKey.Open))
        open_action.triggered.connect(self.choose_project)
        file_menu.addAction(open_action)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        new_action = QAction("&New Conversation", self,
                             shortcut=QKeySequence(QKeySequence.StandardKey.New))
        new_action.triggered.connect(lambda: self.ai_panel.new_conversation())
        file_menu.addAction(new_action)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self,
                              shortcut=QKeySequence(QKeySequence.StandardKey.Quit))
        quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)

        edit_menu = self.menuBar().addMenu("&Edit")
        settings_action = QAction("&Settings…", self,
                                  shortcut=QKeySequence(QKeySequence.StandardKey.Preferences))
        if settings_action.shortcut().isEmpty():
            settings_action.setShortcut(QKeySequence("Ctrl+,"))
        settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        settings_action.triggered.connect(self.open_settings)
        edit_menu.addAction(settings_action)

        run_menu = self.menuBar().addMenu("&Run")
        stop_action = QAction("&Stop", self, shortcut=QKeySequence("Ctrl+."))
        # Also from an approval dialog (its own window): Stop declines it and ends the run.
        stop_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        stop_action.triggered.connect(lambda: self.ai_panel.stop())
        run_menu.addAction(stop_action)

        view_menu = self.menuBar().addMenu("&View")
        view_menu.addAction(self.tools_dock.toggleViewAction())
        history_action = QAction("Tool &History", self, shortcut=QKeySequence("Ctrl+H"))
        history_action.triggered.connect(lambda: self.tabs.setCurrentIndex(1))
        view_menu.addAction(history_action)

        help_menu = self.menuBar().addMenu("&Help")
        about = QAction(f"&About {APP_NAME}", self)
        about.setMenuRole(QAction.MenuRole.AboutRole)
        about.triggered.connect(lambda: QMessageBox.about(
            self, APP_NAME, f"<b>{APP_NAME}</b><br>A desktop AI agent workbench.<br>"
            f"Data: {self.services.data_dir if self.services else '…'}"))
        help_menu.addAction(about)
        self.recent_menu.setEnabled(False)
        self._needs_services += [open_action, new_action, settings_action, stop_action,
                                 history_action]
