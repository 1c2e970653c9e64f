"""Agent profile settings: system prompt, model, temperature, max tokens, tool rounds, provider.

A deprecated or retired model is kept (it is the person's choice) but warned about below the
model box, with its end-of-life date and a suggested replacement; "Use default" picks the newest
model of the default line the provider lists. Both are computed in app.core.agent.models.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.agent.models import ModelInfo, default_model, model_deprecation
from app.core.store.profiles import AgentProfile, ProfileError


class ProfileDialog(QDialog):
    def __init__(self, profile: AgentProfile, models: list[str],
                 parent: QWidget | None = None, *, available: Sequence[ModelInfo] = (),
                 today: date | None = None) -> None:
        super().__init__(parent)
        # The provider's list (when it answered) refines both the default and the warning.
        self._available = tuple(available)
        self._today = today
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
        self.use_default = QPushButton("Use default")
        self.use_default.setObjectName("use-default-model")
        self.use_default.setToolTip(f"Use {default_model(self._available)}")
        self.use_default.clicked.connect(
            lambda: self.model.setCurrentText(default_model(self._available)))
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(self.use_default)
        self.model_warning = QLabel()
        self.model_warning.setObjectName("model-warning")
        self.model_warning.setWordWrap(True)
        self.model_warning.setStyleSheet("color: #9a6700;")
        self.model.currentTextChanged.connect(self._update_model_warning)
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
        form.addRow("Model", model_row)
        form.addRow("", self.model_warning)
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
        self._update_model_warning(self.model.currentText())

    def _update_model_warning(self, model: str) -> None:
        text = model_deprecation(model, self._today or date.today(), self._available)
        self.model_warning.setText(f"⚠ {text}" if text else "")
        self.model_warning.setVisible(bool(text))

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
