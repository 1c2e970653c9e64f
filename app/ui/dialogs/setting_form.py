"""A Settings tab's simple settings as a form: each field of the table (app.core.settings_fields)
rendered with the inputs of a tool's Configure… dialog (app.ui.dialogs.field_inputs), showing
the stored value, and checked and saved through its field."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtWidgets import QFormLayout, QWidget

from app.core.fields import InvalidConfigValue
from app.core.settings_fields import SettingField
from app.core.store.settings import SettingsRepository
from app.ui.dialogs.field_inputs import FieldInput, add_row, field_input, help_label
from app.ui.tones import Tone, text_style


def error_style() -> str:
    return text_style(Tone.DANGER)


class SettingsForm(QFormLayout):
    """The inputs of ``fields``; ``shown`` replaces the stored value a field starts with (what
    is in force where that differs from the setting, e.g. a default that follows the machine)."""

    def __init__(self, settings: SettingsRepository, fields: Sequence[SettingField[Any]],
                 shown: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.fields = tuple(fields)
        shown = shown or {}
        self._built: dict[str, FieldInput] = {}
        for setting in self.fields:
            value = shown[setting.key] if setting.key in shown else settings.read(setting)
            built = self._built[setting.key] = field_input(setting, value)
            add_row(self, built)
        self.error = help_label("", "settings-form-error", error_style)
        self.error.hide()
        self.addRow(self.error)

    def input(self, setting: SettingField[Any]) -> QWidget:
        """The input widget of ``setting`` (a checkbox, a spin box, a text box…)."""
        return self._built[setting.key].widget

    def value(self, setting: SettingField[Any]) -> Any:
        """What the person entered, as the setting stores it; InvalidConfigValue says what to
        fix."""
        read = self._built[setting.key].read
        assert read is not None, f"{setting.key} has no value to read"
        return setting.check_input(read())

    def save(self) -> bool:
        """Store every field; nothing (and False, the reason shown) while one is not valid."""
        try:
            values = [(setting, self.value(setting)) for setting in self.fields]
        except InvalidConfigValue as exc:
            self.error.setText(f"Not saved: {exc}")
            self.error.show()
            return False
        self.error.hide()
        for setting, value in values:
            self.settings.write(setting, value)
        return True
