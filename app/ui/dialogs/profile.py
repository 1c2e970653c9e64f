"""Agent profile settings: system prompt, model, temperature, max tokens, tool rounds, provider."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.store.profiles import AgentProfile, ProfileError


class ProfileDialog(QDialog):
    def __init__(self, profile: AgentProfile, models: list[str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Profile — {profile.name}")
        self.setMinimumWidth(520)
        self._profile = profile
        self._result: AgentProfile | None = None
        self.name = QLineEdit(profile.name)
        self.provider = QComboBox()
        self.provider.addItem("Anthropic", "anthropic")
        self.provider.addItem("OpenAI-compatible (Ollama, llama.cpp, LM Studio)",
                              "openai_compatible")
        self.provider.setCurrentIndex(max(0, self.provider.findData(profile.provider)))
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.addItems(sorted(set(models) | {profile.model}))
        self.model.setCurrentText(profile.model)
        self.base_url = QLineEdit(profile.base_url or "")
        self.base_url.setPlaceholderText("provider default")
        self.system_prompt = QPlainTextEdit(profile.system_prompt)
        self.system_prompt.setPlaceholderText("Instructions the AI follows in every conversation")
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0, 2)
        self.temperature.setSingleStep(0.1)
        self.temperature.setValue(profile.temperature)
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, 1_000_000)
        self.max_tokens.setValue(profile.max_tokens)
        self.max_iterations = QSpinBox()
        self.max_iterations.setRange(1, 500)
        self.max_iterations.setValue(profile.max_iterations)
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Provider", self.provider)
        form.addRow("Model", self.model)
        form.addRow("Base URL", self.base_url)
        form.addRow("System prompt", self.system_prompt)
        form.addRow("Temperature", self.temperature)
        form.addRow("Max tokens", self.max_tokens)
        form.addRow("Tool rounds per request", self.max_iterations)
        self.error = QLabel()
        self.error.setStyleSheet("color: #cf222e;")
        self.error.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save |
                                   QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._try_accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def profile(self) -> AgentProfile | None:
        return self._result

    def _try_accept(self) -> None:
        try:
            self._result = replace(
                self._profile, name=self.name.text(), provider=self.provider.currentData(),
                model=self.model.currentText().strip(), base_url=self.base_url.text().strip()
                or None, system_prompt=self.system_prompt.toPlainText(),
                temperature=self.temperature.value(), max_tokens=self.max_tokens.value(),
                max_iterations=self.max_iterations.value()).validated()
        except ProfileError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        self.accept()
