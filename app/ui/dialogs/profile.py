"""Agent profile settings: system prompt, model, temperature, max tokens, tool rounds, provider,
and quorum review (reviewer models see a call before the person is asked; the plan before the
first change).

A deprecated or retired model is kept (it is the person's choice) but warned about below the
model box, with its end-of-life date and a suggested replacement; "Use default" picks the newest
model of the default line the provider lists. Both are computed in app.core.agent.models.catalog.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date

from PySide6.QtWidgets import (
    QCheckBox,
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

from app.core.agent.models.catalog import ModelInfo, default_model, model_deprecation
from app.core.agent.models.factory import LOCAL_ANTHROPIC_BASE_URL, is_loopback_url
from app.core.store.profiles import AgentProfile, ProfileError
from app.ui.tones import Tone, tone_text

LOCAL_PRESET = 2  # the provider list's "Anthropic-compatible on this computer"


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
        # A preset, not a provider of its own: the Anthropic API of a server on this computer
        # (Ollama, llama.cpp), which needs no key.
        self.provider.addItem("Anthropic-compatible on this computer (Ollama, llama.cpp; "
                              "no key)", "anthropic")
        local = profile.provider == "anthropic" and is_loopback_url(profile.base_url)
        self.provider.setCurrentIndex(LOCAL_PRESET if local else
                                      max(0, self.provider.findData(profile.provider)))
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
        tone_text(self.model_warning, Tone.WARNING)
        self.model.currentTextChanged.connect(self._update_model_warning)
        self.base_url = QLineEdit(profile.base_url or "")
        self.base_url.setPlaceholderText("provider default")
        self.provider.currentIndexChanged.connect(self._preset_chosen)
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
        self.review_before_asking = QCheckBox("Review before asking me")
        self.review_before_asking.setObjectName("profile-review-before-asking")
        self.review_before_asking.setToolTip(
            "A call that would ask you goes to the reviewer models (Settings → Review) first: "
            "it runs only if they all approve, a rejection goes back to the AI, and anything "
            "else still asks you, with their reviews.")
        self.review_before_asking.setChecked(profile.review_before_asking)
        self.review_plan = QCheckBox("Review the plan before the first change")
        self.review_plan.setObjectName("profile-review-plan")
        self.review_plan.setToolTip(
            "Before the first call of a request that changes something, the reviewer models "
            "read the AI's stated plan and may reject it with reasons.")
        self.review_plan.setChecked(profile.review_plan)
        review_box = QVBoxLayout()
        review_box.setSpacing(2)
        review_box.addWidget(self.review_before_asking)
        review_box.addWidget(self.review_plan)
        form.addRow("Review", review_box)
        form.addRow("Reasoning", self._reasoning_row(profile))
        self.error = QLabel()
        tone_text(self.error, Tone.DANGER)
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

    def _reasoning_row(self, profile: AgentProfile) -> QVBoxLayout:
        """Thinking, effort and prompt caching (sent with each request; a model that does not
        support one of them is told nothing it would refuse only if they stay at default)."""
        self.thinking = _choice_combo("profile-thinking", [
            ("off", "Thinking off"), ("adaptive", "Adaptive thinking")], profile.thinking)
        self.thinking.setToolTip("Adaptive: the model decides when and how much to think "
                                 "before answering (Claude models that support it).")
        self.thinking_display = _choice_combo("profile-thinking-display", [
            (None, "Thinking text: default"), ("summarized", "Thinking text: summarized"),
            ("omitted", "Thinking text: omitted")], profile.thinking_display)
        self.effort = _choice_combo("profile-effort", [
            (None, "Effort: model default"), ("low", "Effort: low"), ("medium", "Effort: medium"),
            ("high", "Effort: high"), ("xhigh", "Effort: extra high"), ("max", "Effort: max")],
            profile.effort)
        self.effort.setToolTip("How much effort the model spends (models that support it); "
                               "lower is faster and cheaper.")
        self.prompt_cache = QCheckBox("Prompt caching")
        self.prompt_cache.setObjectName("profile-prompt-cache")
        self.prompt_cache.setChecked(profile.prompt_cache)
        self.prompt_cache.setToolTip("Reuse the unchanged start of each request (tools, system "
                                     "prompt, conversation) from the API's cache: cache reads "
                                     "cost a tenth of normal input.")
        self.cache_ttl = _choice_combo("profile-cache-ttl", [
            ("5m", "Cache for 5 minutes"), ("1h", "Cache for 1 hour")], profile.cache_ttl)
        self.cache_ttl.setToolTip("1 hour keeps the cache through long approval waits; writing "
                                  "it costs more (2× input instead of 1.25×).")
        self.prompt_cache.toggled.connect(self.cache_ttl.setEnabled)
        self.cache_ttl.setEnabled(profile.prompt_cache)
        top, middle, bottom = QHBoxLayout(), QHBoxLayout(), QHBoxLayout()
        top.addWidget(self.thinking)
        top.addWidget(self.thinking_display)
        top.addStretch(1)
        middle.addWidget(self.effort)
        middle.addStretch(1)
        bottom.addWidget(self.prompt_cache)
        bottom.addWidget(self.cache_ttl)
        bottom.addStretch(1)
        box = QVBoxLayout()
        box.setSpacing(2)
        box.addLayout(top)
        box.addLayout(middle)
        box.addLayout(bottom)
        return box

    def _update_model_warning(self, model: str) -> None:
        text = model_deprecation(model, self._today or date.today(), self._available)
        self.model_warning.setText(f"⚠ {text}" if text else "")
        self.model_warning.setVisible(bool(text))

    def profile(self) -> AgentProfile | None:
        return self._result

    def _preset_chosen(self, index: int) -> None:
        """The local preset fills in the local server's address (when none is set)."""
        if index == LOCAL_PRESET and not is_loopback_url(self.base_url.text()):
            self.base_url.setText(LOCAL_ANTHROPIC_BASE_URL)

    def _try_accept(self) -> None:
        try:
            self._result = replace(
                self._profile, name=self.name.text(), provider=self.provider.currentData(),
                model=self.model.currentText().strip(), base_url=self.base_url.text().strip()
                or None, system_prompt=self.system_prompt.toPlainText(),
                temperature=self.temperature.value(), max_tokens=self.max_tokens.value(),
                max_iterations=self.max_iterations.value(),
                review_before_asking=self.review_before_asking.isChecked(),
                review_plan=self.review_plan.isChecked(),
                thinking=self.thinking.currentData(),
                thinking_display=self.thinking_display.currentData(),
                effort=self.effort.currentData(), prompt_cache=self.prompt_cache.isChecked(),
                cache_ttl=self.cache_ttl.currentData()).validated()
        except ProfileError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        self.accept()


def _choice_combo(name: str, choices: Sequence[tuple[str | None, str]],
                  current: str | None) -> QComboBox:
    combo = QComboBox()
    combo.setObjectName(name)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    for value, label in choices:
        combo.addItem(label, value)
    index = combo.findData(current)
    combo.setCurrentIndex(max(index, 0))
    return combo
