"""The usage line under the transcript: the tokens and cost of the last turn and of the
conversation. The price table's formatting is imported by the first usage to show."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt

from app.ui.elided_label import ElidedLabel

if TYPE_CHECKING:
    from app.core.pricing import Usage
    from app.core.store.settings import SettingsRepository


class UsageLine:
    """``label``: "Last turn: … · Conversation: …", placed by the panel."""

    def __init__(self, settings: SettingsRepository) -> None:
        self._settings = settings
        self.label = ElidedLabel()  # cut to the panel's width, whole in the tooltip
        self.label.setObjectName("usage")
        self.label.setStyleSheet("QLabel { color: palette(placeholder-text); }")
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def show(self, model: str, turn: Usage | None, conversation: dict[str, Usage],
             cache_ttl: str = "5m") -> None:
        """With the cost from the price table (Settings → Usage & prices); empty for a
        conversation without turns."""
        if not conversation:  # before the imports: a new conversation at start-up
            self.label.setText("")
            return
        from app.core.pricing import Usage, cost, prices_from_setting
        from app.core.settings_fields import PRICES
        from app.ui.dialogs.usage_settings import format_usage

        table = prices_from_setting(self._settings.read(PRICES))
        total, dollars = Usage(), 0.0
        priced = True
        for name, usage in conversation.items():
            total = total + usage
            spent = cost(name, usage, table, cache_ttl=cache_ttl)
            priced = priced and spent is not None
            dollars += spent or 0.0
        parts = []
        if turn is not None:
            parts.append("Last turn: " + format_usage(turn, cost(model, turn, table,
                                                                 cache_ttl=cache_ttl)))
        parts.append("Conversation: " + format_usage(total, dollars if priced else None))
        self.label.setText("   ·   ".join(parts))
