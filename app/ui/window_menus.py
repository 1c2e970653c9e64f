"""The main window's menu bar: File (open folder, recent folders, new conversation, quit), Edit
(undo, redo, cut, copy, paste, select all on the focused field; find in the transcript;
settings; the message shortcuts), Run (stop), View (tools dock, tool history) and Help (the
keyboard shortcuts, about)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QWidget

from app.core.config import APP_NAME
from app.ui.edit_actions import EditActions
from app.ui.message_shortcuts import MESSAGE_SHORTCUTS
from app.ui.tab_focus import tab_moves_focus


def menu_named(window: QMainWindow, text: str) -> QMenu | None:
    """The menu bar's menu ``text`` ("&Run"), for a collaborator adding its actions."""
    for action in window.menuBar().actions():
        menu = action.menu()
        if action.text() == text and isinstance(menu, QMenu):
            return menu
    return None


class WindowMenus:
    """Builds ``window``'s menus; their actions call back into the window. ``recent_menu`` is
    filled by the project folders; ``needs_services``: the actions enabled with the services."""

    def __init__(self, window: QMainWindow, tools_dock: QDockWidget, *,
                 choose_project: Callable[[], None], new_conversation: Callable[[], None],
                 find_in_transcript: Callable[[], object], open_settings: Callable[[], QWidget],
                 stop_run: Callable[[], None], show_history: Callable[[], None],
                 data_dir: Callable[[], Path | None],
                 message_action: Callable[[str], object] = lambda _name: None) -> None:
        self._window = window
        self._data_dir = data_dir
        menu_bar = window.menuBar()
        file_menu = menu_bar.addMenu("&File")
        open_action = QAction("&Open Folder…", window,
                              shortcut=QKeySequence(QKeySequence.StandardKey.Open))
        open_action.triggered.connect(choose_project)
        file_menu.addAction(open_action)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        new_action = QAction("&New Conversation", window,
                             shortcut=QKeySequence(QKeySequence.StandardKey.New))
        new_action.triggered.connect(lambda: new_conversation())
        file_menu.addAction(new_action)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", window,
                              shortcut=QKeySequence(QKeySequence.StandardKey.Quit))
        quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        quit_action.triggered.connect(window.close)
        file_menu.addAction(quit_action)

        edit_menu = menu_bar.addMenu("&Edit")
        self.edit_actions = EditActions(window, edit_menu)
        edit_menu.addSeparator()
        self.find_action = QAction("&Find in Conversation…", window,
                                   shortcut=QKeySequence(QKeySequence.StandardKey.Find))
        self.find_action.setObjectName("edit-find")
        self.find_action.triggered.connect(lambda: find_in_transcript())
        edit_menu.addAction(self.find_action)
        edit_menu.addSeparator()
        # The panel's message shortcuts (its own QShortcuts: the keys are shown here after a
        # tab, not registered twice, which Qt would call ambiguous).
        for keys, name, method in MESSAGE_SHORTCUTS:
            action = QAction(f"{name}\t{keys}", window)
            action.triggered.connect(lambda _c=False, m=method: message_action(m))
            edit_menu.addAction(action)
        edit_menu.addSeparator()
        settings_action = QAction("&Settings…", window,
                                  shortcut=QKeySequence(QKeySequence.StandardKey.Preferences))
        if settings_action.shortcut().isEmpty():
            settings_action.setShortcut(QKeySequence("Ctrl+,"))
        settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        # Tab moves focus out of the dialog's text boxes and tables too.
        settings_action.triggered.connect(lambda: tab_moves_focus(open_settings()))
        edit_menu.addAction(settings_action)

        run_menu = menu_bar.addMenu("&Run")
        stop_action = QAction("&Stop", window, shortcut=QKeySequence("Ctrl+."))
        # Also from an approval dialog (its own window): Stop declines it and ends the run.
        stop_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        stop_action.triggered.connect(lambda: stop_run())
        run_menu.addAction(stop_action)

        view_menu = menu_bar.addMenu("&View")
        view_menu.addAction(tools_dock.toggleViewAction())
        history_action = QAction("Tool &History", window, shortcut=QKeySequence("Ctrl+H"))
        history_action.triggered.connect(lambda: show_history())
        view_menu.addAction(history_action)

        help_menu = menu_bar.addMenu("&Help")
        keys_action = QAction("&Keyboard Shortcuts", window, shortcut=QKeySequence("Ctrl+/"))
        keys_action.setObjectName("help-shortcuts")
        keys_action.triggered.connect(self._show_shortcuts)
        help_menu.addAction(keys_action)
        about = QAction(f"&About {APP_NAME}", window)
        about.setMenuRole(QAction.MenuRole.AboutRole)
        about.triggered.connect(self._show_about)
        help_menu.addAction(about)
        self.recent_menu.setEnabled(False)
        self.needs_services: list[QAction] = [open_action, new_action, settings_action,
                                              stop_action, history_action, self.find_action]

    def _show_shortcuts(self) -> None:
        from app.ui.dialogs.shortcuts import ShortcutsDialog

        ShortcutsDialog(self._window).open()

    def _show_about(self) -> None:
        # Qt's message boxes are imported where they are used: creating a PySide6 type costs
        # ~1 ms, and the ready window shows none (tests/bench/bench_ui_responsiveness.py).
        from PySide6.QtWidgets import QMessageBox

        data_dir = self._data_dir()
        QMessageBox.about(
            self._window, APP_NAME, f"<b>{APP_NAME}</b><br>A desktop AI agent workbench.<br>"
            f"Data: {data_dir if data_dir is not None else '…'}")
