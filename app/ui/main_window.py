"""The main window: tools list on the left, the AI panel in the centre, history, status bar.

It starts as a shell (menus, toolbar, empty panes at the saved size and place) so it can be
on screen before the database and the tools are loaded; ``attach_services`` then fills it in,
in two steps: the AI panel as soon as the store is open (``ready``: the person can type, and
Send works), then, once the tools part of the services is built in a worker thread
(app.core.services), the tools list, the tool history and the menus that need the tools
(``attach_tools``, ``tools_attached``). Start-up time is dominated by imports, and this way a
person sees the window after Qt's own start-up cost instead of after everything's
(tests/bench/bench_ui_responsiveness.py).

Its collaborators, each built here with what it needs: window_menus (the menu bar),
profile_controls (the profile toolbar, model pickers and the profile/settings dialogs) and
project_folders (the open and recent project folders); this module builds the layout, attaches
the services, wires the collaborators to the AI panel and saves the layout at quit.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QMainWindow,
    QTabWidget,
    QWidget,
)

from app.core.config import APP_NAME
from app.core.settings_fields import LAYOUT, WINDOW_GEOMETRY, WINDOW_STATE, SettingField
from app.ui.elided_label import ElidedLabel
from app.ui.profile_controls import ProfileControls
from app.ui.project_folders import ProjectFolders
from app.ui.tab_focus import tab_moves_focus
from app.ui.window_menus import WindowMenus
from app.ui.window_placement import fit_to_screen, place_for_first_start

if TYPE_CHECKING:
    from app.core.agent.events import ApprovalRequest
    from app.core.services import Services
    from app.ui.ai_panel.find_bar import FindBar
    from app.ui.server_requests import ServerRequestQueue

# Read before the store opens (app.core.store.early) so the window appears where it was.
LAYOUT_KEYS = tuple(setting.key for setting in LAYOUT)


def _placeholder(text: str) -> QLabel:
    label = QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setEnabled(False)
    return label


class MainWindow(QMainWindow):
    ready = Signal()  # the AI panel is built: typing and Send work (once the event loop runs)
    tools_attached = Signal()  # the tools list, the tool history and every menu are live
    project_tools_loaded = Signal()  # an opened folder's own tools.toml is read (off the GUI)
    # From the worker thread that built the tools part (app.startup_threads.start_tools_build):
    # queued to the GUI thread. The argument is empty on success, else what went wrong.
    tools_built = Signal(str)

    def __init__(self, *, services: Services | None = None,
                 project_root: Path | None = None) -> None:
        super().__init__()
        self.services: Services | None = None
        self._closing = False
        self._layout_restored = False
        self._fit_when_shown = False
        self._mcp_unsubscribe: Callable[[], None] = lambda: None
        self.server_requests: ServerRequestQueue | None = None  # set by attach_tools
        self._closed = False  # closeEvent accepted: nothing more is built into the window
        self._tools_attached = False
        self.tools_built.connect(self._on_tools_built)

        # Tab follows the order widgets are made in: the toolbar, the tabs, then the dock.
        self.profiles = ProfileControls(self, lambda: self.live_services, lambda: self.ai_panel,
                                        lambda: self.tools_panel)
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

        self.menus = WindowMenus(
            self, dock, choose_project=lambda: self.folders.choose(),
            new_conversation=lambda: self.ai_panel.new_conversation(),
            find_in_transcript=self.find_in_transcript,
            open_settings=lambda: self.profiles.open_settings(),
            stop_run=lambda: self.ai_panel.stop(),
            show_history=lambda: self.tabs.setCurrentIndex(1),
            data_dir=lambda: self.services.data_dir if self.services is not None else None,
            message_action=lambda m: getattr(self.ai_panel.conversation_actions, m)())
        self.folders = ProjectFolders(
            self, self.profiles.project_label, self.menus.recent_menu,
            lambda: self.live_services, opened=self._project_opened,
            tools_loaded=self._project_tools_loaded)
        # The AI panel exists from then on: Tab leaves its fields (the panels attached later,
        # tools and history, set their own).
        self.ready.connect(lambda: tab_moves_focus(self.ai_panel))
        self._needs_services: list[QWidget | QAction] = [*self.profiles.needs_services,
                                                         *self.menus.needs_services]
        self.status_label = ElidedLabel("Starting…")  # a long status must not widen the window
        self.approvals_label = QLabel("")
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.approvals_label)
        for item in self._needs_services:
            item.setEnabled(False)
        self.setWindowTitle(APP_NAME)
        place_for_first_start(self)  # restore_layout puts the saved place
        self._fit_when_shown = True
        self._minimum_seen = self.minimumSize()
        if services is not None:
            self.attach_services(services, project_root)

    @property
    def profile_id(self) -> int:
        """The id of the current agent profile (the profile picker's choice)."""
        return self.profiles.profile_id

    @property
    def project_root(self) -> Path | None:
        """The open project folder (None: none)."""
        return self.folders.root

    @property
    def live_services(self) -> Services:
        """``services``, once attached. What uses it is enabled or built only by
        attach_services, so reaching it earlier is a bug, not a state to handle."""
        if self.services is None:
            raise RuntimeError("MainWindow used before attach_services")
        return self.services

    def restore_layout(self, saved: Mapping[str, Any]) -> None:
        """Size, place and dock layout saved at the last quit (``LAYOUT_KEYS``)."""
        def decoded(setting: SettingField[str]) -> QByteArray | None:
            value = setting.value_of(saved.get(setting.key))
            try:  # a damaged value only costs the saved layout, never the start
                return QByteArray(base64.b64decode(value, validate=True)) if value else None
            except ValueError:
                return None

        geometry, state = decoded(WINDOW_GEOMETRY), decoded(WINDOW_STATE)
        if geometry is not None:
            self.restoreGeometry(geometry)  # Qt ignores bytes it cannot read
            # Saved on a larger screen, or before a scale change: Send would be off-screen.
            fit_to_screen(self)
            self._fit_when_shown = True
        if state is not None:
            self.restoreState(state)
        self._layout_restored = True

    def resizeEvent(self, event: QResizeEvent) -> None:
        # Not event(): PySide6 would make the type of every QEvent kind to wrap the first one.
        super().resizeEvent(event)
        minimum = self.minimumSize()
        if minimum != self._minimum_seen and self.isVisible():
            # What was attached widened the window's minimum (it grew): keep it on screen.
            self._minimum_seen = minimum
            fit_to_screen(self, shrink=False)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._fit_when_shown:  # the frame's size is known now
            self._fit_when_shown = False
            fit_to_screen(self)

    def attach_services(self, services: Services, project_root: Path | None = None) -> None:
        """Fill the shell in: the AI panel now (``ready``); the rest once the tools part of the
        services is built (``attach_tools``; at once when it already is)."""
        # Imported here, not at the top: the shell must not wait for them (see module doc).
        # The approval and tool-config dialogs are not needed to be ready: they are imported by
        # their first use, or before it by app.ui.deferred_imports (DEFERRED_UI_MODULES).
        from app.ui.ai_panel.panel import AIPanel
        from app.ui.approval_queue import ApprovalQueue

        self.services = services
        profile_id = services.profiles.ensure_default().id
        assert profile_id is not None  # a stored profile always has its row id
        self.profiles.profile_id = profile_id

        def sandbox_for(request: ApprovalRequest) -> dict[str, Any]:
            from app.ui.dialogs.approval import approval_sandbox

            return approval_sandbox(services, self.profile_id, request)

        self.approvals = ApprovalQueue(self, lambda: self.project_root, sandbox_for)
        self.ai_panel = AIPanel(services, self.profile_id, self.approvals,
                                lambda: self.project_root)
        self._replace_tab(0, self.ai_panel, "Assistant")
        from app.ui.parallel_runs import ParallelRuns

        self.parallel_runs = ParallelRuns(self, self.ai_panel, self.approvals,
                                          lambda: self.tabs.setCurrentWidget(self.ai_panel))
        from app.ui.worktree_runs import WorktreeRuns

        self.worktree_runs = WorktreeRuns(self, self.ai_panel, services,
                                          lambda: self.project_root, self.status_label.setText,
                                          self.parallel_runs.switch)
        # The keyboard goes to the prompt: the shell had nothing to type into, and what the person
        # types from ready on is for the AI (it waits in Qt's queue until the event loop runs).
        self.ai_panel.prompt.setFocus(Qt.FocusReason.OtherFocusReason)
        self.ai_panel.status_message.connect(self.status_label.setText)
        self.ai_panel.writing_started.connect(self.profiles.prepare_for_runs)
        self.approvals.pending_changed.connect(
            lambda n: self.approvals_label.setText(f"{n} approval(s) pending" if n else ""))
        if not self._layout_restored:
            self.restore_layout({s.key: services.settings.read(s) for s in LAYOUT})
        # The project is known now (a Send uses it); opened fully by attach_tools.
        self.folders.start_with(project_root)
        self.status_label.setText("Loading tools…")
        self.ready.emit()
        if services.tools_built:
            self.attach_tools()

    def _replace_tab(self, index: int, widget: QWidget, title: str) -> None:
        current = self.tabs.currentIndex()
        placeholder = self.tabs.widget(index)
        self.tabs.removeTab(index)
        if placeholder is not None:
            placeholder.deleteLater()
        self.tabs.insertTab(index, widget, title)
        self.tabs.setCurrentIndex(max(current, 0))

    def _on_tools_built(self, problem: str) -> None:
        if problem:
            self.status_label.setText(f"The tools could not be loaded: {problem}")
            return
        # Not into a closed window: the tools may be built after the person quit, while the
        # app is shutting its services down.
        if self.services is not None and not self._closing and not self._closed:
            self.attach_tools()
            # What the panels open later, one module per turn. Started by the worker's signal,
            # which follows its imports of the agent's modules (app.startup_threads), not by
            # attach_tools (at ready when the tools were built before it): the dialogs import
            # those too, and the two threads importing them at once stalled the GUI thread.
            from app.ui.deferred_imports import DEFERRED_UI_MODULES, import_in_turns

            import_in_turns(DEFERRED_UI_MODULES, self)

    @property
    def tools_are_attached(self) -> bool:
        return self._tools_attached

    def attach_tools(self) -> None:
        """The second step of attach_services, once the tools part is built: the tools list,
        the tool history, the menus that need them, and the project opened."""
        if self._tools_attached:
            return
        self._tools_attached = True
        from app.ui.widgets.history_view import HistoryView
        from app.ui.widgets.tools_panel import ToolsPanel

        services = self.live_services
        self.history = HistoryView(services.audit, services.registry.names())
        self._replace_tab(1, self.history, "Tool history")

        def reload_history_when_shown(index: int) -> None:
            if index == 1:
                self.history.model.reload()

        self.tabs.currentChanged.connect(reload_history_when_shown)

        # Filled in by open_project below, once the project's own tools are known: built once.
        self.tools_panel = ToolsPanel(services, self.profile_id, populate=False)
        for panel in (self.history, self.tools_panel):  # Tab leaves their fields and tables
            tab_moves_focus(panel)
        dock_placeholder = self.tools_dock.widget()
        self.tools_dock.setWidget(self.tools_panel)
        if dock_placeholder is not None:
            dock_placeholder.deleteLater()
        mcp = services.mcp
        if mcp is not None:
            self._mcp_unsubscribe = mcp.subscribe(lambda _server: self.tools_panel.rebuild())
        # MCP servers' sampling and elicitation requests go through the person, and HTTP
        # servers sign in through the browser: both set on the provider before it starts its
        # servers (app.main starts them on tools_attached, emitted below).
        from app.ui.controllers.mcp_settings import install_mcp_sign_in
        from app.ui.server_requests import install_server_requests

        self.server_requests = install_server_requests(self, services)
        install_mcp_sign_in(mcp)

        for item in self._needs_services:
            item.setEnabled(True)
        self.profiles.refresh()
        self.folders.refresh_recent()
        self.status_label.setText("Ready")
        if self.ai_panel.session is None:
            self.folders.open(self.project_root)
        else:  # a Send came first: open_project would start a new conversation
            self.tools_panel.project_root = self.project_root
            self.tools_panel.rebuild()
            self.ai_panel.project_opened(self.project_root)
        self.tools_attached.emit()

    def _project_opened(self, root: Path | None) -> None:
        """A folder was opened: an idle conversation gives way to a new one in it, and the
        panel prunes the folder's old checkpoints (hourly) and lists its conversations."""
        panel = self.ai_panel
        if panel.session is not None and not panel.running:
            panel.new_conversation()
        panel.project_opened(root)

    def _project_tools_loaded(self, root: Path | None) -> None:
        self.tools_panel.project_root = root
        self.tools_panel.rebuild()
        self.project_tools_loaded.emit()

    def find_in_transcript(self) -> FindBar | None:
        """Edit → Find: the find bar above the conversation (made on first use), focused;
        the Assistant tab is shown first."""
        panel = getattr(self, "ai_panel", None)
        if panel is None:
            return None
        bar: FindBar = panel.find_bar()
        index = self.tabs.indexOf(panel)
        if index >= 0:
            self.tabs.setCurrentIndex(index)
        bar.open_bar()
        return bar

    # -- lifecycle -------------------------------------------------------------------------

    async def _close_when_stopped(self) -> None:
        await self.ai_panel.shutdown()
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        # Quitting declines every pending approval and cancels the run: nothing unapproved runs.
        # While a run winds down (recording the declines, closing the transcript) the window
        # stays; it closes itself once the run has ended.
        if self.services is None:  # closed while starting: nothing to save or stop yet
            self._closed = True
            event.accept()
            return
        if not self._closing and not self.parallel_runs.may_close():  # asked: runs are going
            event.ignore()
            return
        # An approval dialog open now is declined, and everything queued behind it.
        self.approvals.abort("The window was closed.")
        if self.server_requests is not None:
            self.server_requests.abort("The window was closed.")
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
        self.profiles.cancel_model_listing()
        self.services.settings.write(
            WINDOW_GEOMETRY, base64.b64encode(self.saveGeometry().data()).decode())
        self.services.settings.write(
            WINDOW_STATE, base64.b64encode(self.saveState().data()).decode())
        self._closed = True
        event.accept()
