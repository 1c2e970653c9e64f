"""Desktop notifications of parallel runs: when the window is not in front, a run that needs
the person's approval, or that finished or failed, says so through the system tray
(QSystemTrayIcon.showMessage; nothing where there is no tray). Clicking the message opens
that conversation. ``notification_for`` is the decision, without Qt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QWidget

if TYPE_CHECKING:
    from app.core.agent.run_board import RunRow, RunStatus


def notification_for(previous: RunStatus | None, row: RunRow, app_active: bool
                     ) -> tuple[str, str] | None:
    """The (title, text) to show for ``row``'s change from ``previous``, or None: only when
    none of the app's windows is in front, and only for what the person must act on or wants
    to know (a Stop is their own doing)."""
    from app.core.agent.run_board import RunStatus

    if app_active:
        return None
    if row.status is previous:
        return None
    if row.status is RunStatus.NEEDS_INPUT:
        return "Approval needed", f"“{row.title}” asks to run a tool."
    if previous is None or not previous.active:
        return None
    if row.status is RunStatus.DONE:
        return "Run finished", f"“{row.title}” is done."
    if row.status is RunStatus.FAILED:
        return "Run failed", f"“{row.title}” stopped with an error."
    return None


class RunNotifier(QObject):
    """``clicked(key)``: the person clicked the message of the run ``key``."""

    clicked = Signal(str)

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._last: dict[str, RunStatus] = {}
        self._tray: QSystemTrayIcon | None = None
        self._clicked_key: str | None = None
        self.shown: list[tuple[str, str, str]] = []  # (key, title, text), newest last

    def row_changed(self, row: RunRow) -> None:
        previous = self._last.get(row.key)
        self._last[row.key] = row.status
        active = QApplication.applicationState() == Qt.ApplicationState.ApplicationActive
        message = notification_for(previous, row, active)
        if message is not None:
            self.notify(row.key, *message)

    def notify(self, key: str, title: str, text: str) -> None:
        self.shown.append((key, title, text))
        del self.shown[:-20]
        tray = self._tray_icon()
        if tray is None:
            return
        self._clicked_key = key
        tray.showMessage(title, text, QSystemTrayIcon.MessageIcon.Information, 8000)

    def _tray_icon(self) -> QSystemTrayIcon | None:
        if self._tray is None:
            if not QSystemTrayIcon.isSystemTrayAvailable():
                return None
            self._tray = QSystemTrayIcon(self._window.windowIcon(), self)
            self._tray.messageClicked.connect(self._on_clicked)
            self._tray.show()
        return self._tray

    def _on_clicked(self) -> None:
        if self._clicked_key is not None:
            self.clicked.emit(self._clicked_key)
