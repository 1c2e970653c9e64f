"""The main window's menu bar: File (open folder, recent folders, new conversation, quit), Edit
(undo, redo, cut, copy, paste, select all on the focused field; find in the transcript;
settings), Run (stop), View (tools dock, tool history) and Help."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QTabWidget, QWidget

from app.core.config import APP_NAME
from app.ui.edit_actions import EditActions
from app.ui.tab_focus import tab_moves_focus

if TYPE_CHECKING:
    # Type-checked as the window it is mixed into; at run time a plain mixin.
    from PySide6.QtWidgets import QMainWindow as _Window

    from app.core.services import Services
    from app.ui.ai_panel.find_bar import FindBar
    from app.ui.ai_panel.panel import AIPanel
    from app.ui.dialogs.settings import SettingsDialog
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
        self.edit_actions = EditActions(self, edit_menu)
        edit_menu.addSeparator()
        self.find_action = QAction("&Find in Conversation…", self,
                                   shortcut=QKeySequence(QKeySequence.StandardKey.Find))
        self.find_action.setObjectName("edit-find")
        self.find_action.triggered.connect(self.find_in_transcript)
        edit_menu.addAction(self.find_action)
        edit_menu.addSeparator()
        settings_action = QAction("&Settings…", self,
                                  shortcut=QKeySequence(QKeySequence.StandardKey.Preferences))
        if settings_action.shortcut().isEmpty():
            settings_action.setShortcut(QKeySequence("Ctrl+,"))
        settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        # Tab moves focus out of the dialog's text boxes and tables too.
        settings_action.triggered.connect(lambda: tab_moves_focus(self.open_settings()))
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
        about.triggered.connect(self._show_about)
        help_menu.addAction(about)
        self.recent_menu.setEnabled(False)
        self._needs_services += [open_action, new_action, settings_action, stop_action,
                                 history_action, self.find_action]
        ready = getattr(self, "ready", None)
        if ready is not None:  # the AI panel exists from then on: Tab leaves its fields
            # (the panels attached later, tools and history, set their own)
            ready.connect(lambda: tab_moves_focus(self.ai_panel))

    def _show_about(self) -> None:
        # Qt's message boxes are imported where they are used: creating a PySide6 type costs
        # ~1 ms, and the ready window shows none (tests/bench/bench_ui_responsiveness.py).
        from PySide6.QtWidgets import QMessageBox

        services = getattr(self, "services", None)
        QMessageBox.about(
            self, APP_NAME, f"<b>{APP_NAME}</b><br>A desktop AI agent workbench.<br>"
            f"Data: {services.data_dir if services else '…'}")

    def find_in_transcript(self) -> FindBar | None:
        """Edit → Find: the find bar above the conversation (made on first use), focused;
        the Assistant tab is shown first."""
        panel = getattr(self, "ai_panel", None)
        if panel is None:
            return None
        bar = panel.find_bar()
        index = self.tabs.indexOf(panel)
        if index >= 0:
            self.tabs.setCurrentIndex(index)
        bar.open_bar()
        return bar
