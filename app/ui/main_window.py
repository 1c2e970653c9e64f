"""The main window: tools list on the left, the AI panel in the centre, history, status bar.

It starts as a shell (menus, toolbar, empty panes at the saved size and place) so it can be
on screen before the database and the tools are loaded; ``attach_services`` then fills it in.
Start-up time is dominated by imports, and this way a person sees the window after Qt's own
start-up cost instead of after everything's (tests/bench/bench_ui_responsiveness.py).

Its parts: window_menus (the menu bar), profile_controls (the profile toolbar, model pickers and
the profile/settings dialogs) and project_folders (the open and recent project folders) are
mixins of MainWindow; this module builds the layout, attaches the services and saves the
layout at quit.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QShowEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QMainWindow,
    QTabWidget,
    QWidget,
)

from app.core.config import APP_NAME
from app.ui.profile_controls import ProfileControls
from app.ui.project_folders import ProjectFolders
from app.ui.window_menus import WindowMenus

if TYPE_CHECKING:
    import asyncio

    from app.core.agent.events import ApprovalRequest
    from app.core.agent.models import ModelInfo
    from app.core.services import Services

# Read before the store opens (app.core.store.early) so the window appears where it was.
LAYOUT_KEYS = ("ui.geometry", "ui.state")


def _placeholder(text: str) -> QLabel:
    label = QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setEnabled(False)
    return label


class MainWindow(WindowMenus, ProjectFolders, ProfileControls, QMainWindow):
    ready = Signal()  # services attached: the panels are live

    def __init__(self, *, services: Services | None = None,
                 project_root: Path | None = None) -> None:
        super().__init__()
        self.services: Services | None = None
        self.project_root: Path | None = None
        self._closing = False
        self._layout_restored = False
        self._fit_when_shown = False
        self._models_task: asyncio.Future[None] | None = None
        # The provider's model list with dates and lifecycle, once it answered (else empty):
        # the default model and the deprecation warning use it.
        self._model_infos: list[ModelInfo] = []
        self._needs_services: list[QAction | QWidget] = []

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(_placeholder("Starting…"), "Assistant")
        self.tabs.addTab(_placeholder(""), "Tool history")
        self.setCentralWidget(self.tabs)

        dock = QDockWidget("Tools", self)
        dock.setObjectName("tools-dock")
        dock.setWidget(_placeholder("Loading tools…"))
        # Closable, so View → Tools can hide it and bring it back.
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable |
                         QDockWidget.DockWidgetFeature.DockWidgetFloatable |
                         QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
        self.resizeDocks([dock], [340], Qt.Orientation.Horizontal)
        self.tools_dock = dock

        self._build_toolbar()
        self._build_menus()
        self.status_label = QLabel("Starting…")
        self.approvals_label = QLabel("")
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.approvals_label)
        for item in self._needs_services:
            item.setEnabled(False)
        self.setWindowTitle(APP_NAME)
        self.resize(1200, 780)
        if services is not None:
            self.attach_services(services, project_root)

    @property
    def live_services(self) -> Services:
        """``services``, once attached. What uses it is enabled or built only by
        attach_services, so reaching it earlier is a bug, not a state to handle."""
        if self.services is None:
            raise RuntimeError("MainWindow used before attach_services")
        return self.services

    def restore_layout(self, saved: Mapping[str, Any]) -> None:
        """Size, place and dock layout saved at the last quit (``LAYOUT_KEYS``)."""
        def decoded(key: str) -> QByteArray | None:
            value = saved.get(key)
            try:  # a damaged value only costs the saved layout, never the start
                return QByteArray(base64.b64decode(value, validate=True)) \
                    if isinstance(value, str) and value else None
            except ValueError:
                return None

        geometry, state = decoded("ui.geometry"), decoded("ui.state")
        if geometry is not None:
            self.restoreGeometry(geometry)  # Qt ignores bytes it cannot read
            # Saved on a larger screen, or before a scale change: Send would be off-screen.
            self.fit_to_screen()
            self._fit_when_shown = True
        if state is not None:
            self.restoreState(state)
        self._layout_restored = True

    def fit_to_screen(self) -> None:
        """Shrink and move the window (frame included) into its screen's available area; a
        maximised or full-screen window is the window manager's to place."""
        if self.windowState() & (Qt.WindowState.WindowMaximized |
                                 Qt.WindowState.WindowFullScreen):
            return
        screen = self.screen()
        if screen is None:
            return
        available = screen.availableGeometry()
        frame, inner = self.frameGeometry(), self.geometry()
        # The frame's extra size (title bar, borders); known once the window is shown.
        extra_w, extra_h = frame.width() - inner.width(), frame.height() - inner.height()
        width = max(min(inner.width(), available.width() - extra_w), self.minimumWidth())
        height = max(min(inner.height(), available.height() - extra_h), self.minimumHeight())
        left = min(max(frame.x(), available.x()), available.right() + 1 - width - extra_w)
        top = min(max(frame.y(), available.y()), available.bottom() + 1 - height - extra_h)
        left, top = max(left, available.x()), max(top, available.y())
        if (width, height) != (inner.width(), inner.height()):
            self.resize(width, height)
        if (left, top) != (frame.x(), frame.y()):
            self.move(left, top)  # move() places the frame's top-left corner

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._fit_when_shown:  # the frame's size is known now
            self._fit_when_shown = False
            self.fit_to_screen()

    def attach_services(self, services: Services, project_root: Path | None = None) -> None:
        """Fill the shell in: panels, pickers, recent folders, the project."""
        # Imported here, not at the top: the shell must not wait for them (see module doc).
        # The approval and tool-config dialogs are not needed to be ready: they are imported by
        # their first use, or before it by app.main's warm-up of DEFERRED_UI_MODULES.
        from app.ui.approval_queue import ApprovalQueue
        from app.ui.widgets.ai_panel import AIPanel
        from app.ui.widgets.history_view import HistoryView
        from app.ui.widgets.tools_panel import ToolsPanel

        self.services = services
        profile_id = services.profiles.ensure_default().id
        assert profile_id is not None  # a stored profile always has its row id
        self.profile_id: int = profile_id

        def sandbox_for(request: ApprovalRequest) -> dict[str, Any]:
            from app.ui.dialogs.approval import approval_sandbox

            return approval_sandbox(services, self.profile_id, request)

        self.approvals = ApprovalQueue(self, lambda: self.project_root, sandbox_for)
        self.ai_panel = AIPanel(services, self.profile_id, self.approvals,
                                lambda: self.project_root)
        self.history = HistoryView(services.audit, services.registry.names())
        current = self.tabs.currentIndex()
        for index in reversed(range(self.tabs.count())):
            placeholder = self.tabs.widget(index)
            self.tabs.removeTab(index)
            if placeholder is not None:
                placeholder.deleteLater()
        self.tabs.addTab(self.ai_panel, "Assistant")
        self.tabs.addTab(self.history, "Tool history")
        self.tabs.setCurrentIndex(max(current, 0))

        def reload_history_when_shown(index: int) -> None:
            if index == 1:
                self.history.model.reload()

        self.tabs.currentChanged.connect(reload_history_when_shown)

        # Filled in by open_project below, once the project's own tools are known: built once.
        self.tools_panel = ToolsPanel(services, self.profile_id, populate=False)
        dock_placeholder = self.tools_dock.widget()
        self.tools_dock.setWidget(self.tools_panel)
        if dock_placeholder is not None:
            dock_placeholder.deleteLater()

        self.ai_panel.status_message.connect(self.status_label.setText)
        self.ai_panel.writing_started.connect(self._prepare_for_runs)
        self.approvals.pending_changed.connect(
            lambda n: self.approvals_label.setText(f"{n} approval(s) pending" if n else ""))
        mcp = services.mcp
        self._mcp_unsubscribe = mcp.subscribe(lambda _server: self.tools_panel.rebuild()) \
            if mcp is not None else (lambda: None)

        for item in self._needs_services:
            item.setEnabled(True)
        self._refresh_profiles()
        self._refresh_recent()
        if not self._layout_restored:
            self.restore_layout({key: services.settings.get(key) for key in LAYOUT_KEYS})
        self.status_label.setText("Ready")
        self.open_project(project_root or self._last_project())
        self.ready.emit()

    # -- lifecycle -------------------------------------------------------------------------

    async def _close_when_stopped(self) -> None:
        await self.ai_panel.shutdown()
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        # Quitting declines every pending approval and cancels the run: nothing unapproved runs.
        # While a run winds down (recording the declines, closing the transcript) the window
        # stays; it closes itself once the run has ended.
        if self.services is None:  # closed while starting: nothing to save or stop yet
            event.accept()
            return
        # An approval dialog open now is declined, and everything queued behind it.
        self.approvals.abort("The window was closed.")
        if self.ai_panel.running:
            event.ignore()
            if not self._closing:
                self._closing = True
                self.status_label.setText("Stopping before closing…")
                self.ai_panel.stop()
                import asyncio  # loaded long since (the event loop runs on it)

                self._close_task = asyncio.ensure_future(self._close_when_stopped())
            return
        self._mcp_unsubscribe()
        if self._models_task is not None:
            self._models_task.cancel()
        self.services.settings.set(
            "ui.geometry", base64.b64encode(self.saveGeometry().data()).decode())
        self.services.settings.set(
            "ui.state", base64.b64encode(self.saveState().data()).decode())
        event.accept()
