"""The window's side of parallel runs: the Runs button in the status bar and its status view,
Run → Runs…, asking before closing while runs go on, and the desktop notifications of runs
that need the person or finished while the window is not in front.

Built by the main window once the AI panel exists; everything it does goes through the panel's
``SessionHolder`` (its pool of runs not shown) and ``RunSwitch``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtGui import QAction, QKeySequence

from app.ui.ai_panel.run_switch import RunSwitch
from app.ui.run_notifications import RunNotifier
from app.ui.runs_button import RunsButton
from app.ui.window_menus import menu_named

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from app.core.agent.run_board import RunRow
    from app.ui.ai_panel.panel import AIPanel
    from app.ui.approval_queue import ApprovalQueue


def quit_question(active: int) -> str:
    if active == 1:
        return "1 run is working; stop it and quit?"
    return f"{active} runs are working; stop them and quit?"


class ParallelRuns:
    """The Runs button and view (``switch``: Open and Stop), the quit question and the
    notifications, over the panel's pool of runs."""

    def __init__(self, window: QMainWindow, panel: AIPanel, approvals: ApprovalQueue,
                 show_panel: Callable[[], None]) -> None:
        """``show_panel`` brings the Assistant tab to the front."""
        self._window = window
        self._panel = panel
        self._show_panel = show_panel
        # Asks the person (a modal question); tests answer it themselves.
        self.confirm_quit: Callable[[str], bool] = self._ask
        self.switch = RunSwitch(panel.sessions, approvals,
                                open_conversation=self.open_conversation,
                                stop_shown=panel.stop)
        self.button = RunsButton(self.switch, window)
        window.statusBar().addPermanentWidget(self.button)
        self.notifier = RunNotifier(window)
        self.notifier.clicked.connect(self.open_conversation_key)
        panel.sessions.pool.listeners.append(self._changed)
        self.action = QAction("&Runs…", window, shortcut=QKeySequence("Ctrl+Shift+J"))
        self.action.setObjectName("show-runs")
        self.action.triggered.connect(self.button.show_view)
        run_menu = menu_named(window, "&Run")
        if run_menu is not None:
            run_menu.addAction(self.action)

    def _changed(self, row: RunRow) -> None:
        if not shiboken6.isValid(self.button):  # the window is gone; a run ends after it
            return
        self.button.refresh()
        active = self.switch.active_count()
        self.action.setText(f"&Runs ({active})…" if active else "&Runs…")
        self.notifier.row_changed(row)

    def open_conversation(self, conversation_id: int) -> None:
        """Show the conversation in the Assistant tab."""
        self._panel.conversations.open(conversation_id)
        self._show_panel()

    def open_conversation_key(self, key: str) -> None:
        self._window.showNormal()
        self._window.raise_()
        self._window.activateWindow()
        self.switch.open(key)

    def may_close(self) -> bool:
        """Closing the window: with runs going, the person is asked first; yes stops them."""
        active = self.switch.active_count()
        if active == 0:
            return True
        if not self.confirm_quit(quit_question(active)):
            return False
        self.switch.stop_all()
        return True

    def _ask(self, question: str) -> bool:
        # Qt's message box is imported here, by the question: the ready window shows none.
        from PySide6.QtWidgets import QMessageBox

        answer = QMessageBox.question(
            self._window, "Quit", question,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes
