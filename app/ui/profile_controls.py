"""The main window's profile toolbar and what it drives: the agent profile, model and
permission-mode pickers (with the model's deprecation warning), the provider's model list, and
the profile and settings dialogs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QMainWindow, QPushButton, QToolBar, QWidget

from app.ui.model_list import ModelList
from app.ui.tones import Tone, tone_text

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtCore import SignalInstance

    from app.core.agent.session import AgentSession
    from app.core.services import Services
    from app.ui.dialogs.settings import SettingsDialog
    from app.ui.widgets.tools_panel import ToolsPanel


class ProfilePanel(Protocol):
    """What the profile controls ask of the AI panel (app.ui.ai_panel.panel.AIPanel)."""

    profile_id: int
    permission_mode_changed: SignalInstance

    @property
    def running(self) -> bool: ...

    @property
    def session(self) -> AgentSession | None: ...

    def new_conversation(self) -> None: ...

    def choose_permission_mode(self, value: str) -> None: ...

    def show_permission_mode(self) -> None: ...


def label_for(field: QWidget, text: str) -> QLabel:
    """The label in front of ``field``, its buddy: on Linux a screen reader names a combo box
    by this relation (the box's own accessible name there is its value)."""
    label = QLabel(text)
    label.setBuddy(field)
    return label


class ProfileControls:
    """The profile toolbar of ``window`` and the current profile (``profile_id``, set when the
    services are attached). ``project_label`` (the open folder, at the toolbar's end) is the
    project folders' to fill; ``needs_services``: the pickers enabled with the services.

    The services, the AI panel and the tools list come after the toolbar: each is asked for
    when it is used."""

    profile_id: int

    def __init__(self, window: QMainWindow, services: Callable[[], Services],
                 panel: Callable[[], ProfilePanel],
                 tools_panel: Callable[[], ToolsPanel]) -> None:
        self._window = window
        self._services = services
        self._panel = panel
        self._tools_panel = tools_panel
        # The window's one model list (Settings and the profile dialog share it), with dates
        # and lifecycle once the provider answered: the default model and the deprecation
        # warning use it.
        self.models = ModelList(window)
        self.models.changed.connect(self._show_models)
        self._models_task: asyncio.Future[None] | None = None
        bar = QToolBar("Profile")
        bar.setObjectName("profile-toolbar")
        bar.setMovable(False)
        self.profile_picker = QComboBox()
        self.profile_picker.setObjectName("profile-picker")
        self.model_picker = QComboBox()
        self.model_picker.setObjectName("model-picker")
        self.model_picker.setEditable(True)
        self.model_picker.setMinimumWidth(220)
        # Sized by a fixed number of characters, not by the longest name listed: a long model
        # or profile name scrolls in its field instead of widening the toolbar.
        for picker, characters in ((self.profile_picker, 10), (self.model_picker, 24)):
            picker.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            picker.setMinimumContentsLength(characters)
        # The profile's permission mode (app.core.permission_mode), filled in with the services.
        self.mode_picker = QComboBox()
        self.mode_picker.setObjectName("mode-picker")
        self.mode_picker.setMinimumContentsLength(5)
        # Screen readers name each picker by the label in front of it.
        for picker, name in ((self.profile_picker, "Profile"), (self.model_picker, "Model"),
                             (self.mode_picker, "Permission mode")):
            picker.setAccessibleName(name)
        self.model_warning = QLabel()
        self.model_warning.setObjectName("model-warning")
        tone_text(self.model_warning, Tone.WARNING)
        self.project_label = QLabel()
        self.project_label.setObjectName("project-label")
        profile_button = QPushButton("Profile…")
        bar.addWidget(label_for(self.profile_picker, " Profile "))
        bar.addWidget(self.profile_picker)
        bar.addWidget(label_for(self.model_picker, "  Model "))
        bar.addWidget(self.model_picker)
        # A toolbar shows or hides its widgets through their actions, not the widgets.
        self._model_warning_action = bar.addWidget(self.model_warning)
        self._model_warning_action.setVisible(False)
        bar.addWidget(label_for(self.mode_picker, "  Mode "))
        bar.addWidget(self.mode_picker)
        bar.addWidget(profile_button)
        spacer = QWidget()
        spacer.setSizePolicy(spacer.sizePolicy().horizontalPolicy().Expanding,
                             spacer.sizePolicy().verticalPolicy())
        bar.addWidget(spacer)
        bar.addWidget(self.project_label)
        window.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        self.needs_services: list[QWidget] = [self.profile_picker, self.model_picker,
                                              self.mode_picker, profile_button]
        self.profile_picker.activated.connect(
            lambda i: self.set_profile(self.profile_picker.itemData(i)))
        # Saved when the person picks or finishes typing a model, not on every keystroke.
        self.model_picker.activated.connect(lambda _index: self._commit_model())
        model_edit = self.model_picker.lineEdit()
        if model_edit is not None:  # the picker is editable, so it has one
            model_edit.setAccessibleName("Model")  # a focus stop of its own
            model_edit.editingFinished.connect(self._commit_model)
        profile_button.clicked.connect(self.edit_profile)
        self.mode_picker.activated.connect(lambda _index: self._commit_mode())

    def refresh(self) -> None:
        """The pickers show the stored profiles and the current one's model and mode."""
        self.profile_picker.blockSignals(True)
        self.profile_picker.clear()
        for profile in self._services().profiles.list():
            self.profile_picker.addItem(profile.name, profile.id)
        self.profile_picker.setCurrentIndex(self.profile_picker.findData(self.profile_id))
        self.profile_picker.blockSignals(False)
        profile = self._services().profiles.get(self.profile_id)
        self.models.fill(self.model_picker, profile.model)
        self._show_model_warning(profile.model)
        self._show_mode(profile.permission_mode.value)
        self._panel().show_permission_mode()

    def cancel_model_listing(self) -> None:
        """The window closes: the provider's model list is no longer wanted."""
        if self._models_task is not None:
            self._models_task.cancel()

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
            self._panel().permission_mode_changed.connect(self._show_mode)
        mode = PermissionMode.parse(value)
        self.mode_picker.blockSignals(True)
        self.mode_picker.setCurrentIndex(self.mode_picker.findData(mode.value))
        self.mode_picker.blockSignals(False)
        self.mode_picker.setToolTip(f"Permission mode: {mode.label}. {mode.description}")

    def _commit_mode(self) -> None:
        """Saved at once to the current profile; the agent reads it when a run starts."""
        value = self.mode_picker.currentData()
        if isinstance(value, str):
            self._panel().choose_permission_mode(value)  # saves; permission_mode_changed

    def _show_model_warning(self, model: str) -> None:
        """Warn (never change the model) when the saved model is deprecated or retired."""
        from datetime import date

        from app.core.agent.models.catalog import deprecation

        found = deprecation(model, date.today(), self.models.infos)
        # Short in the toolbar (it overflows otherwise), the whole sentence as the tooltip.
        self.model_warning.setText(f"⚠ {found.short()}" if found else "")
        self.model_warning.setToolTip(found.sentence() if found else "")
        self.model_picker.setToolTip(found.sentence() if found else "")
        self._model_warning_action.setVisible(found is not None)

    def set_profile(self, profile_id: int) -> None:
        if self._panel().running:
            return
        self.profile_id = profile_id
        panel = self._panel()
        panel.profile_id = profile_id
        panel.new_conversation()
        self._tools_panel().set_profile(profile_id)
        self.refresh()

    def _commit_model(self) -> None:
        text = self.model_picker.currentText().strip()
        if text:
            profile = self._services().profiles.get(self.profile_id)
            if profile.model != text:
                self._services().profiles.update(replace(profile, model=text))
            self._show_model_warning(text)

    async def refresh_models(self) -> None:
        """Offer the models the provider lists (when a key is set); keep the current choice."""
        from app.core.agent.models import list_model_infos

        profile = self._services().profiles.get(self.profile_id)
        self.models.set_infos(await list_model_infos(profile))  # changed: _show_models

    def _show_models(self) -> None:
        """A model list arrived (here or in Settings): offer it, keeping what is typed."""
        current = self.model_picker.currentText()
        profile = self._services().profiles.get(self.profile_id)
        self.models.fill(self.model_picker, profile.model, current)
        self._show_model_warning(current)

    def prepare_for_runs(self) -> None:
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
        session = self._panel().session
        if session is not None:
            session.invalidate_client()
        self.refresh()
        self._tools_panel().rebuild()  # "Require the sandbox" may have changed what it says
        import asyncio

        self._models_task = asyncio.ensure_future(self.refresh_models())

    def edit_profile(self) -> None:
        from app.ui.dialogs.profile import ProfileDialog

        profile = self._services().profiles.get(self.profile_id)
        dialog = ProfileDialog(profile, self.models.ids(), self._window,
                               available=self.models.infos)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)

        def done(code: int) -> None:
            updated = dialog.profile()
            if code and updated is not None:
                self._services().profiles.update(updated)
                self.refresh()
            dialog.deleteLater()

        dialog.finished.connect(done)
        dialog.open()

    def open_settings(self) -> SettingsDialog:
        from app.ui.dialogs.settings import SettingsDialog

        dialog = SettingsDialog(self._services(), self.profile_id, self._window,
                                models=self.models)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)

        def done(_code: int) -> None:
            self._after_settings()
            dialog.deleteLater()

        dialog.finished.connect(done)
        dialog.open()
        return dialog
