"""The editor of one reviewer (Settings → Review), and the check every stored entry gets.

An entry is checked with ``ReviewerConfig``, the same check the agent loop makes, so an entry
the loop would skip cannot be saved.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.review import ReviewerConfig
from app.core.visible_text import make_visible
from app.ui.tones import Tone, follow_palette, plain_text_style

PROVIDERS: tuple[tuple[str, str], ...] = (
    ("anthropic", "Anthropic"),
    ("openai_compatible", "OpenAI-compatible (Ollama, llama.cpp, LM Studio, …)"),
)
MUTED_STYLE = "color: palette(placeholder-text);"


def error_style() -> str:
    return plain_text_style(Tone.DANGER)


def reviewer_entry(name: str, provider: str, model: str, base_url: str, timeout_s: float,
                   max_calls_per_run: int) -> dict[str, Any]:
    """A settings entry, checked by ``ReviewerConfig`` (raises ValueError with the reason)."""
    config = ReviewerConfig(name=name.strip(), provider=provider,  # type: ignore[arg-type]
                            model=model.strip(), base_url=base_url.strip() or None,
                            api_key=None, timeout_s=float(timeout_s),
                            max_calls_per_run=int(max_calls_per_run))
    return {"name": config.name, "provider": config.provider, "model": config.model,
            "base_url": config.base_url, "timeout_s": config.timeout_s,
            "max_calls_per_run": config.max_calls_per_run}


def entry_error(entry: Any) -> str | None:
    """Why a stored entry is not a valid reviewer (the loop skips it), or None."""
    if not isinstance(entry, Mapping):
        return "not a reviewer entry"
    try:
        reviewer_entry(str(entry.get("name", "")), str(entry.get("provider", "anthropic")),
                       str(entry.get("model", "")), str(entry.get("base_url") or ""),
                       float(entry.get("timeout_s", 90.0)),
                       int(entry.get("max_calls_per_run", 50)))
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None


def number_or(value: Any, default: float) -> float:
    try:
        return float(value) if value is not None else default
    except (TypeError, ValueError):
        return default



class ReviewerEditor(QDialog):
    """Add or edit one reviewer; OK only once ``ReviewerConfig`` accepts it."""

    def __init__(self, entry: Mapping[str, Any] | None = None, parent: QWidget | None = None,
                 *, taken_names: Iterable[str] = ()) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit reviewer" if entry else "Add reviewer")
        self.setMinimumWidth(480)
        self._taken = {n.strip().casefold() for n in taken_names}
        self._entry: dict[str, Any] | None = None
        entry = entry or {}
        self.name = QLineEdit(str(entry.get("name", "")))
        self.name.setObjectName("reviewer-name")
        self.name.setPlaceholderText("shown in the reviews, e.g. sonnet or local-qwen")
        self.provider = QComboBox()
        self.provider.setObjectName("reviewer-provider")
        for value, label in PROVIDERS:
            self.provider.addItem(label, value)
        self.provider.setCurrentIndex(max(0, self.provider.findData(
            entry.get("provider", "anthropic"))))
        self.model = QLineEdit(str(entry.get("model", "")))
        self.model.setObjectName("reviewer-model")
        self.model.setPlaceholderText("e.g. claude-sonnet-4-5 or qwen2.5:14b")
        self.base_url = QLineEdit(str(entry.get("base_url") or ""))
        self.base_url.setObjectName("reviewer-base-url")
        self.timeout = QDoubleSpinBox()
        self.timeout.setObjectName("reviewer-timeout")
        self.timeout.setRange(1, 600)
        self.timeout.setDecimals(0)
        self.timeout.setSuffix(" s")
        self.timeout.setValue(number_or(entry.get("timeout_s"), 90.0))
        self.budget = QSpinBox()
        self.budget.setObjectName("reviewer-budget")
        self.budget.setRange(0, 100_000)
        self.budget.setSuffix(" calls per run")
        self.budget.setValue(int(number_or(entry.get("max_calls_per_run"), 50)))
        self.key_note = QLabel()
        self.key_note.setObjectName("reviewer-key-note")
        self.key_note.setWordWrap(True)
        self.key_note.setStyleSheet(MUTED_STYLE)
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Provider", self.provider)
        form.addRow("Model", self.model)
        form.addRow("Base URL", self.base_url)
        form.addRow("Timeout", self.timeout)
        form.addRow("Budget", self.budget)
        form.addRow("", self.key_note)
        self.error = QLabel()
        self.error.setObjectName("reviewer-error")
        self.error.setWordWrap(True)
        follow_palette(self.error, error_style)
        self.error.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok |
                                   QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        buttons.accepted.connect(self._try_accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.provider.currentIndexChanged.connect(self._sync_provider)
        self._sync_provider()

    def _sync_provider(self) -> None:
        provider = self.provider.currentData()
        self.base_url.setPlaceholderText(
            "https://api.anthropic.com (default)" if provider == "anthropic"
            else "required, e.g. http://localhost:11434/v1")
        self.key_note.setText(
            "Uses the Anthropic API key (Settings → Provider)." if provider == "anthropic"
            else "Uses the OpenAI-compatible provider's key, if it needs one (a local server "
                 "usually does not).")

    def entry(self) -> dict[str, Any] | None:
        return self._entry

    def _try_accept(self) -> None:
        name = self.name.text().strip()
        try:
            if name.casefold() in self._taken:
                raise ValueError(f"a reviewer named {name!r} already exists")
            self._entry = reviewer_entry(name, self.provider.currentData(), self.model.text(),
                                         self.base_url.text(), self.timeout.value(),
                                         self.budget.value())
        except ValueError as exc:
            self.error.setText(make_visible(str(exc)))
            self.error.show()
            return
        self.accept()
