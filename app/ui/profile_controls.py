"""The main window's profile toolbar and what it drives: the agent profile, model and
permission-mode pickers (with the model's deprecation warning), the provider's model list, and
the profile and settings dialogs."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QLabel, QPushButton, QToolBar, QWidget

if TYPE_CHECKING:
    import asyncio

    # Type-checked as the window it is mixed into; at run time a plain mixin.
    from PySide6.QtWidgets import QMainWindow as _Window

    from app.core.agent.models import ModelInfo
    from app.core.services import Services
    from app.ui.ai_panel.panel import AIPanel
    from app.ui.dialogs.settings import SettingsDialog
    from app.ui.widgets.tools_panel import ToolsPanel
else:
    _Window = object


class ProfileControls(_Window):
    """Mixin of MainWindow: the profile toolbar, the pickers and the profile/settings dialogs."""

    profile_id: int
    ai_panel: AIPanel
    tools_panel: ToolsPanel
    _model_infos: list[ModelInfo]
    _models_task: asyncio.Future[None] | None
    _needs_services: list[QAction | QWidget]

    if TYPE_CHECKING:
        @property
        def live_services(self) -> Services: ...

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
        # The profile's permission mode (app.core.permission_mode), filled in with the services.
        self.mode_picker = QComboBox()
        self.mode_picker.setObjectName("mode-picker")
        self.mode_picker.setMinimumContentsLength(5)
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
        bar.addWidget(QLabel("  Mode "))
        bar.addWidget(self.mode_picker)
        bar.addWidget(profile_button)
        spacer = QWidget()
        spacer.setSizePolicy(spacer.sizePolicy().horizontalPolicy().Expanding,
                             spacer.sizePolicy().verticalPolicy())
        bar.addWidget(spacer)
        bar.addWidget(self.project_label)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        self._needs_services += [self.profile_picker, self.model_picker, self.mode_picker,
                                 profile_button]
        self.profile_picker.activated.connect(
            lambda i: self.set_profile(self.profile_picker.itemData(i)))
        # Saved when the person picks or finishes typing a model, not on every keystroke.
        self.model_picker.activated.connect(lambda _index: self._commit_model())
        model_edit = self.model_picker.lineEdit()
        if model_edit is not None:  # the picker is editable, so it has one
            model_edit.editingFinished.connect(self._commit_model)
        profile_button.clicked.connect(self.edit_profile)
        self.mode_picker.activated.connect(lambda _index: self._commit_mode())

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
        self._show_mode(profile.permission_mode.value)
        self.ai_panel.show_permission_mode()

    def _show_mode(self, value: str) -> None:
        """The mode picker shows ``value`` (the current profile's mode), its description as the
        tooltip."""
        from app.core.permission_mode import PermissionMode

        if self.mode_picker.count() == 0:
            for mode in PermissionMode:
                self.mode_picker.addItem(mode.label, mode.value)
                self.mode_picker.setItemData(self.mode_picker.count() - 1, mode.description,
                                             Qt.ItemDataRole.ToolTipRole)
            # The first-run panel saves a choice too: show it here.
            self.ai_panel.permission_mode_changed.connect(self._show_mode)
        mode = PermissionMode.parse(value)
        self.mode_picker.blockSignals(True)
        self.mode_picker.setCurrentIndex(self.mode_picker.findData(mode.value))
        self.mode_picker.blockSignals(False)
        self.mode_picker.setToolTip(f"Permission mode: {mode.label}. {mode.description}")

    def _commit_mode(self) -> None:
        """Saved at once to the current profile; the agent reads it when a run starts."""
        value = self.mode_picker.currentData()
        if isinstance(value, str):
            self.ai_panel.choose_permission_mode(value)  # saves; permission_mode_changed

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
            import asyncio  # after the first paint: the shell starts without it

            self._models_task = asyncio.ensure_future(prepare())

    def _after_settings(self) -> None:
        # A new key or base URL: the next run builds a new client, and the model list may grow.
        if self.ai_panel.session is not None:
            self.ai_panel.session.invalidate_client()
        self._refresh_profiles()
        self.tools_panel.rebuild()  # "Require the sandbox" may have changed what it says
        import asyncio

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
