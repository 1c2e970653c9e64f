"""Settings: provider (key, model, base URL), permission rules, the reviewer models (quorum
review), sensitive paths, the sandbox, checkpoints, about."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.config import APP_NAME
from app.core.secrets import (
    ANTHROPIC_API_KEY,
    SecretStoreError,
    keep_across_starts,
    keyring_failure,
    secret_source,
    set_secret,
    set_session_secret,
)
from app.core.services import (
    Services,
)
from app.core.settings_fields import PARALLEL_RUNS, SUB_AGENT_LIMITS
from app.core.store.profiles import DEFAULT_MODEL
from app.ui.dialogs.checkpoint_settings import CheckpointsTab
from app.ui.dialogs.rules_tab import RulesTab
from app.ui.dialogs.sandbox_settings import SandboxGroup
from app.ui.dialogs.sensitive_settings import SensitivePathsTab
from app.ui.dialogs.setting_form import SettingsForm
from app.ui.model_list import ModelList
from app.ui.tones import Tone, text_span, tone_text


class ProviderTab(QWidget):
    """The provider's key, model and base URL. ``models`` is the window's model list
    (app.ui.model_list): Test connection's answer goes there, so the toolbar offers it too."""

    def __init__(self, services: Services, profile_id: int, parent: QWidget | None = None,
                 *, models: ModelList | None = None):
        super().__init__(parent)
        self.services = services
        self.profile_id = profile_id
        self.models = models if models is not None else ModelList(self)
        profile = services.profiles.get(profile_id)
        form = QFormLayout(self)
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        source = secret_source(ANTHROPIC_API_KEY)
        self.api_key.setPlaceholderText({"keyring": "stored in the OS keyring",
                                         "environment": "from ANTHROPIC_API_KEY",
                                         "session": "kept for this session only",
                                         "none": "sk-ant-…"}[source])
        # Without an OS keyring a key can still be used: kept in memory until the app quits.
        self.session_only = QCheckBox("Keep the key for this session only (not stored)")
        self.session_only.setObjectName("key-session-only")
        self.session_only.setToolTip("The key stays in memory until the app quits; nothing "
                                     "is written to disk.")
        self.keyring_note = QLabel()
        self.keyring_note.setObjectName("keyring-note")
        self.keyring_note.setWordWrap(True)
        self.keyring_note.setTextFormat(Qt.TextFormat.PlainText)
        tone_text(self.keyring_note, Tone.WARNING)
        self.keyring_note.hide()
        failure = keyring_failure() if source in ("none", "session") else None
        if failure is not None or source == "session":
            self.session_only.setChecked(True)
        if failure is not None:
            self._show_keyring_note(failure)
        self.model = QComboBox()
        self.model.setEditable(True)
        self.models.fill(self.model, profile.model)
        self.models.changed.connect(self._show_models)
        self.base_url = QLineEdit(profile.base_url or "")
        self.base_url.setPlaceholderText("https://api.anthropic.com (default)")
        self.status = QLabel()
        self.status.setObjectName("provider-status")
        self.status.setWordWrap(True)
        self.test_button = QPushButton("Test connection")
        form.addRow("API key", self.api_key)
        form.addRow("", self.session_only)
        form.addRow("", self.keyring_note)
        form.addRow("Model", self.model)
        form.addRow("Base URL", self.base_url)
        form.addRow("", self.test_button)
        form.addRow("", self.status)
        self._test_task: asyncio.Future[None] | None = None
        self.test_button.clicked.connect(self.start_connection_test)

    def start_connection_test(self) -> None:
        self.test_button.setEnabled(False)
        self.status.setText("Connecting…")
        self._test_task = asyncio.ensure_future(self.test_connection())

    async def test_connection(self) -> None:
        """List the models with the values in the form (not yet saved); report what happened."""
        from dataclasses import replace

        from app.core.agent.models import ProviderError, create_provider, provider_model_infos

        profile = replace(self.services.profiles.get(self.profile_id),
                          base_url=self.base_url.text().strip() or None)
        try:
            provider = await asyncio.to_thread(
                create_provider, profile, api_key=self.api_key.text().strip() or None,
                max_retries=0)
            try:
                models = await provider_model_infos(provider)
            finally:
                await provider.aclose()
        except ProviderError as exc:
            self.status.setText(text_span(Tone.DANGER, exc.message))
        except Exception as exc:  # network errors and the like: say what, not crash
            self.status.setText(text_span(Tone.DANGER, str(exc)))
        else:
            self.models.set_infos(models)  # changed: this tab and the toolbar show them
            self.status.setText(f"Connected: {len(models)} models available.")
        finally:
            self.test_button.setEnabled(True)

    def _show_models(self) -> None:
        """The window's model list changed: offer it, keeping what is typed."""
        saved = self.services.profiles.get(self.profile_id).model
        self.models.fill(self.model, saved, self.model.currentText())

    def _show_keyring_note(self, failure: str) -> None:
        self.keyring_note.setText(
            f"The OS keyring is not available ({failure}): a key entered here works until the "
            f"app quits, and must be entered again at the next start. "
            f"{keep_across_starts(ANTHROPIC_API_KEY)}")
        self.keyring_note.show()

    def save(self) -> bool:
        """Save the model, the base URL and the key. The key goes to the OS keyring, or to
        memory for this session (asked for, or when the keyring fails); the other settings are
        saved either way. False when the keyring failed just now: the tab says what happened."""
        from dataclasses import replace

        profile = self.services.profiles.get(self.profile_id)
        self.services.profiles.update(replace(
            profile, model=self.model.currentText().strip() or DEFAULT_MODEL,
            base_url=self.base_url.text().strip() or None))
        key = self.api_key.text().strip()
        if not key:
            return True
        if self.session_only.isChecked():
            set_session_secret(ANTHROPIC_API_KEY, key)
            return True
        try:
            set_secret(ANTHROPIC_API_KEY, key)
        except SecretStoreError:
            set_session_secret(ANTHROPIC_API_KEY, key)
            self.session_only.setChecked(True)
            self._show_keyring_note(keyring_failure() or "unknown error")
            self.status.setText("The key is kept for this session only; the model and base URL "
                                "are saved.")
            return False
        return True


class SettingsDialog(QDialog):
    def __init__(self, services: Services, profile_id: int, parent: QWidget | None = None,
                 *, models: ModelList | None = None):
        super().__init__(parent)
        self.setWindowTitle(f"{APP_NAME} Settings")
        self.resize(900, 640)
        self.tabs = QTabWidget()
        self.provider_tab = ProviderTab(services, profile_id, models=models)
        self.rules_tab = RulesTab(services, profile_id=profile_id)
        self.tabs.addTab(self.provider_tab, "Provider")
        self.tabs.addTab(self.rules_tab, "Permission rules")
        from app.ui.dialogs.review_settings import ReviewSettingsTab

        self.review_tab = ReviewSettingsTab(services)
        self.tabs.addTab(self.review_tab, "Review")
        self.sensitive_tab = SensitivePathsTab(services)
        self.tabs.addTab(self.sensitive_tab, "Sensitive paths")
        self.sandbox_group = SandboxGroup(services)
        sandbox_tab = QWidget()
        sandbox_layout = QVBoxLayout(sandbox_tab)
        sandbox_layout.addWidget(self.sandbox_group)
        sandbox_layout.addStretch(1)
        self.tabs.addTab(sandbox_tab, "Sandbox")
        self.checkpoints_tab = CheckpointsTab(services)
        self.tabs.addTab(self.checkpoints_tab, "Checkpoints")
        # How many sub-agents and conversations run at once, and how long a sub-agent may go.
        self.runs_form = SettingsForm(services.settings, (*SUB_AGENT_LIMITS, PARALLEL_RUNS))
        runs_tab = self.runs_tab = QWidget()
        runs_layout = QVBoxLayout(runs_tab)
        runs_layout.addLayout(self.runs_form)
        runs_layout.addStretch(1)
        self.tabs.addTab(runs_tab, "Sub-agents && runs")
        from app.ui.dialogs.usage_settings import UsageTab  # with the dialog, not at start-up

        self.usage_tab = UsageTab(services)
        self.tabs.addTab(self.usage_tab, "Usage && prices")
        if services.mcp is not None and services.mcp_config is not None:
            from app.ui.dialogs.mcp_settings import McpServersTab

            self.mcp_tab = McpServersTab(services.mcp_config, services.mcp)
            self.tabs.addTab(self.mcp_tab, "MCP servers")
        about = QLabel(f"<h3>{APP_NAME}</h3><p>A desktop AI agent workbench. Every tool call "
                       "passes your permission rules.</p><p>Data folder: "
                       f"<code>{services.data_dir}</code></p>")
        about.setWordWrap(True)
        about.setAlignment(Qt.AlignmentFlag.AlignTop)
        about.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tabs.addTab(about, "About")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save |
                                   QDialogButtonBox.StandardButton.Close)
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(buttons)

    def _save(self) -> None:
        if not self.sensitive_tab.save():  # an addition that could never match: say so
            self.tabs.setCurrentWidget(self.sensitive_tab)
            return
        if not self.review_tab.save():  # an entry the agent loop would skip: say so
            self.tabs.setCurrentWidget(self.review_tab)
            return
        if not self.usage_tab.save():  # a price that is not a number: say so
            self.tabs.setCurrentWidget(self.usage_tab)
            return
        if not self.checkpoints_tab.save():  # a value out of its range: say so
            self.tabs.setCurrentWidget(self.checkpoints_tab)
            return
        if not self.runs_form.save():
            self.tabs.setCurrentWidget(self.runs_tab)
            return
        self.sandbox_group.save()
        if self.provider_tab.save():
            self.accept()


__all__ = ["CheckpointsTab", "ProviderTab", "RulesTab", "SandboxGroup", "SensitivePathsTab",
           "SettingsDialog"]
