"""Settings: provider (key, model, base URL), permission rules, sensitive paths, the sandbox,
checkpoints, about."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
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
from app.core.secrets import ANTHROPIC_API_KEY, SecretStoreError, secret_source, set_secret
from app.core.services import (
    Services,
)
from app.core.store.profiles import DEFAULT_MODEL
from app.ui.dialogs.checkpoint_settings import CheckpointsTab
from app.ui.dialogs.rules_tab import RulesTab
from app.ui.dialogs.sandbox_settings import SandboxGroup
from app.ui.dialogs.sensitive_settings import SensitivePathsTab
from app.ui.markup import escape


class ProviderTab(QWidget):
    def __init__(self, services: Services, profile_id: int, parent: QWidget | None = None):
        super().__init__(parent)
        self.services = services
        self.profile_id = profile_id
        profile = services.profiles.get(profile_id)
        form = QFormLayout(self)
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        source = secret_source(ANTHROPIC_API_KEY)
        self.api_key.setPlaceholderText({"keyring": "stored in the OS keyring",
                                         "environment": "from ANTHROPIC_API_KEY",
                                         "none": "sk-ant-…"}[source])
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.addItems(sorted({profile.model, DEFAULT_MODEL}))
        self.model.setCurrentText(profile.model)
        self.base_url = QLineEdit(profile.base_url or "")
        self.base_url.setPlaceholderText("https://api.anthropic.com (default)")
        self.status = QLabel()
        self.status.setObjectName("provider-status")
        self.status.setWordWrap(True)
        self.test_button = QPushButton("Test connection")
        form.addRow("API key", self.api_key)
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

        from app.core.agent.providers import ProviderError, create_provider

        profile = replace(self.services.profiles.get(self.profile_id),
                          base_url=self.base_url.text().strip() or None)
        try:
            provider = await asyncio.to_thread(
                create_provider, profile, api_key=self.api_key.text().strip() or None,
                max_retries=0)
            try:
                models = await provider.list_models()
            finally:
                await provider.aclose()
        except ProviderError as exc:
            self.status.setText(f"<span style='color:#cf222e'>{escape(exc.message)}</span>")
        except Exception as exc:  # network errors and the like: say what, not crash
            self.status.setText(f"<span style='color:#cf222e'>{escape(str(exc))}</span>")
        else:
            current = self.model.currentText()
            self.model.clear()
            self.model.addItems(models)
            self.model.setCurrentText(current)
            self.status.setText(f"Connected: {len(models)} models available.")
        finally:
            self.test_button.setEnabled(True)

    def save(self) -> bool:
        key = self.api_key.text().strip()
        if key:
            try:
                set_secret(ANTHROPIC_API_KEY, key)
            except SecretStoreError as exc:
                self.status.setText(str(exc))
                return False
        profile = self.services.profiles.get(self.profile_id)
        from dataclasses import replace

        self.services.profiles.update(replace(
            profile, model=self.model.currentText().strip() or DEFAULT_MODEL,
            base_url=self.base_url.text().strip() or None))
        return True


class SettingsDialog(QDialog):
    def __init__(self, services: Services, profile_id: int, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(f"{APP_NAME} Settings")
        self.resize(900, 640)
        self.tabs = QTabWidget()
        self.provider_tab = ProviderTab(services, profile_id)
        self.rules_tab = RulesTab(services, profile_id=profile_id)
        self.tabs.addTab(self.provider_tab, "Provider")
        self.tabs.addTab(self.rules_tab, "Permission rules")
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
        self.sandbox_group.save()
        self.checkpoints_tab.save()
        if self.provider_tab.save():
            self.accept()


__all__ = ["CheckpointsTab", "ProviderTab", "RulesTab", "SandboxGroup", "SensitivePathsTab",
           "SettingsDialog"]
