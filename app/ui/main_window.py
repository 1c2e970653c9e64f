"""The main window: tools list on the left, the AI panel in the centre, history, status bar.

It starts as a shell (menus, toolbar, empty panes at the saved size and place) so it can be
on screen before the database and the tools are loaded; ``attach_services`` then fills it in.
Start-up time is dominated by imports, and this way a person sees the window after Qt's own
start-up cost instead of after everything's (tests/bench/bench_ui_responsiveness.py).
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QTabWidget,
    QToolBar,
    QWidget,
)

from app.core.config import APP_NAME

if TYPE_CHECKING:
    from app.core.agent.models import ModelInfo
    from app.core.services import Services
    from app.ui.dialogs.settings import SettingsDialog

MAX_RECENT = 8
# Read before the store opens (app.core.store.early) so the window appears where it was.
LAYOUT_KEYS = ("ui.geometry", "ui.state")


def _placeholder(text: str) -> QLabel:
    label = QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setEnabled(False)
    return label


class MainWindow(QMainWindow):
    ready = Signal()  # services attached: the panels are live

    def __init__(self, *, services: Services | None = None,
                 project_root: Path | None = None) -> None:
        super().__init__()
        self.services: Services | None = None
        self.project_root: Path | None = None
        self._closing = False
        self._layout_restored = False
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
        if state is not None:
            self.restoreState(state)
        self._layout_restored = True

    def attach_services(self, services: Services, project_root: Path | None = None) -> None:
        """Fill the shell in: panels, pickers, recent folders, the project."""
        # Imported here, not at the top: the shell must not wait for them (see module doc).
        from app.ui.approval_queue import ApprovalQueue
        from app.ui.widgets.ai_panel import AIPanel
        from app.ui.widgets.history_view import HistoryView
        from app.ui.widgets.tools_panel import ToolsPanel

        self.services = services
        profile_id = services.profiles.ensure_default().id
        assert profile_id is not None  # a stored profile always has its row id
        self.profile_id: int = profile_id

        self.approvals = ApprovalQueue(self, lambda: self.project_root)
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

        self.tools_panel = ToolsPanel(services, self.profile_id)
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

    # -- chrome ----------------------------------------------------------------------------

    def _build_toolbar(self) -> None:
        bar = QToolBar("Profile")
        bar.setObjectName("profile-toolbar")
        bar.setMovable(False)
        self.profile_picker = QComboBox()
        self.profile_picker.setObjectName("profile-picker")
        self.model_picker = QComboBox()
        self.model_picker.setObjectName("model-picker")
        self.model_picker.setEditable(True)
        self.model_picker.setMinimumWidth(220)
        self.model_warning = QLabel()
        self.model_warning.setObjectName("model-warning")
        self.model_warning.setStyleSheet("color: #9a6700;")
        self.project_label = QLabel()
        self.project_label.setObjectName("project-label")
        profile_button = QPushButton("Profile…")
        bar.addWidget(QLabel(" Profile "))
        bar.addWidget(self.profile_picker)
        bar.addWidget(QLabel("  Model "))
        bar.addWidget(self.model_picker)
        # A toolbar shows or hides its widgets through their actions, not the widgets.
        self._model_warning_action = bar.addWidget(self.model_warning)
        self._model_warning_action.setVisible(False)
        bar.addWidget(profile_button)
        spacer = QWidget()
        spacer.setSizePolicy(spacer.sizePolicy().horizontalPolicy().Expanding,
                             spacer.sizePolicy().verticalPolicy())
        bar.addWidget(spacer)
        bar.addWidget(self.project_label)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        self._needs_services += [self.profile_picker, self.model_picker, profile_button]
        self.profile_picker.activated.connect(
            lambda i: self.set_profile(self.profile_picker.itemData(i)))
        # Saved when the person picks or finishes typing a model, not on every keystroke.
        self.model_picker.activated.connect(lambda _index: self._commit_model())
        model_edit = self.model_picker.lineEdit()
        if model_edit is not None:  # the picker is editable, so it has one
            model_edit.editingFinished.connect(self._commit_model)
        profile_button.clicked.connect(self.edit_profile)

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

    # -- project ---------------------------------------------------------------------------

    def choose_project(self) -> None:
        start = str(self.project_root or Path.home())
        chosen = QFileDialog.getExistingDirectory(self, "Open project folder", start)
        if chosen:
            self.open_project(Path(chosen))

    def open_project(self, root: Path | None) -> None:
        if root is not None and not root.is_dir():
            root = None
        self.project_root = root.resolve() if root is not None else None
        self.live_services.set_project_root(self.project_root)
        self.tools_panel.project_root = self.project_root
        self.tools_panel.rebuild()  # the project's own .tebiki/tools.toml may add tools
        if self.ai_panel.session is not None and not self.ai_panel.running:
            self.ai_panel.new_conversation()
        name = self.project_root.name if self.project_root else None
        self.setWindowTitle(f"{name} — {APP_NAME}" if name else APP_NAME)
        self.project_label.setText(f"Project: {self.project_root}  " if self.project_root
                                   else "No project folder — File → Open Folder…  ")
        if self.project_root is not None:
            saved = self.live_services.settings.get("ui.recent_folders", [])
            recent = ([str(self.project_root)] +
                      [p for p in saved if p != str(self.project_root)])[:MAX_RECENT]
            if recent != saved:  # reopening the last folder at start-up writes nothing
                self.live_services.settings.set("ui.recent_folders", recent)
                self._refresh_recent()

    def _last_project(self) -> Path | None:
        for path in self.live_services.settings.get("ui.recent_folders", []):
            if Path(path).is_dir():
                return Path(path)
        return None

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        folders = self.live_services.settings.get("ui.recent_folders", [])
        for folder in folders:
            action = self.recent_menu.addAction(folder)
            action.triggered.connect(lambda _=False, f=folder: self.open_project(Path(f)))
        self.recent_menu.setEnabled(bool(folders))

    # -- profiles --------------------------------------------------------------------------

    def _refresh_profiles(self) -> None:
        from app.core.agent.models import default_model

        self.profile_picker.blockSignals(True)
        self.profile_picker.clear()
        for profile in self.live_services.profiles.list():
            self.profile_picker.addItem(profile.name, profile.id)
        self.profile_picker.setCurrentIndex(self.profile_picker.findData(self.profile_id))
        self.profile_picker.blockSignals(False)
        profile = self.live_services.profiles.get(self.profile_id)
        self.model_picker.blockSignals(True)
        self.model_picker.clear()
        self.model_picker.addItems(sorted({profile.model, default_model(self._model_infos)}))
        self.model_picker.setCurrentText(profile.model)
        self.model_picker.blockSignals(False)
        self._show_model_warning(profile.model)

    def _show_model_warning(self, model: str) -> None:
        """Warn (never change the model) when the saved model is deprecated or retired."""
        from datetime import date

        from app.core.agent.models import deprecation

        found = deprecation(model, date.today(), self._model_infos)
        # Short in the toolbar (it overflows otherwise), the whole sentence as the tooltip.
        self.model_warning.setText(f"⚠ {found.short()}" if found else "")
        self.model_warning.setToolTip(found.sentence() if found else "")
        self.model_picker.setToolTip(found.sentence() if found else "")
        self._model_warning_action.setVisible(found is not None)

    def set_profile(self, profile_id: int) -> None:
        if self.ai_panel.running:
            return
        self.profile_id = profile_id
        self.ai_panel.profile_id = profile_id
        self.ai_panel.new_conversation()
        self.tools_panel.set_profile(profile_id)
        self._refresh_profiles()

    def _commit_model(self) -> None:
        text = self.model_picker.currentText().strip()
        if text:
            profile = self.live_services.profiles.get(self.profile_id)
            if profile.model != text:
                self.live_services.profiles.update(replace(profile, model=text))
            self._show_model_warning(text)

    async def refresh_models(self) -> None:
        """Offer the models the provider lists (when a key is set); keep the current choice."""
        from app.core.agent.models import default_model
        from app.core.agent.providers import list_model_infos

        profile = self.live_services.profiles.get(self.profile_id)
        self._model_infos = await list_model_infos(profile)
        models = [m.id for m in self._model_infos] or [default_model()]
        current = self.model_picker.currentText()
        self.model_picker.blockSignals(True)
        self.model_picker.clear()
        self.model_picker.addItems(sorted(set(models) | {profile.model}))
        self.model_picker.setCurrentText(current)
        self.model_picker.blockSignals(False)
        self._show_model_warning(current)

    def _prepare_for_runs(self) -> None:
        """The person started writing: load what a run needs meanwhile (the model SDK, the
        web tools), then list the provider's models, which needs the SDK."""
        async def prepare() -> None:
            from app.core.warmup import warm_up

            await warm_up()
            await self.refresh_models()

        if self._models_task is None or self._models_task.done():
            self._models_task = asyncio.ensure_future(prepare())

    def _after_settings(self) -> None:
        # A new key or base URL: the next run builds a new client, and the model list may grow.
        if self.ai_panel.session is not None:
            self.ai_panel.session.invalidate_client()
        self._refresh_profiles()
        self._models_task = asyncio.ensure_future(self.refresh_models())

    def edit_profile(self) -> None:
        from app.core.agent.models import default_model
        from app.ui.dialogs.profile import ProfileDialog

        profile = self.live_services.profiles.get(self.profile_id)
        models = [m.id for m in self._model_infos] or [default_model()]
        dialog = ProfileDialog(profile, models, self, available=self._model_infos)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)

        def done(code: int) -> None:
            updated = dialog.profile()
            if code and updated is not None:
                self.live_services.profiles.update(updated)
                self._refresh_profiles()
            dialog.deleteLater()

        dialog.finished.connect(done)
        dialog.open()

    def open_settings(self) -> SettingsDialog:
        from app.ui.dialogs.settings import SettingsDialog

        dialog = SettingsDialog(self.live_services, self.profile_id, self)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)

        def done(_code: int) -> None:
            self._after_settings()
            dialog.deleteLater()

        dialog.finished.connect(done)
        dialog.open()
        return dialog

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
        if self.ai_panel.running:
            event.ignore()
            if not self._closing:
                self._closing = True
                self.status_label.setText("Stopping before closing…")
                self.ai_panel.stop()
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
