"""The models the pickers offer, one list for the whole window: the toolbar's Model picker,
Settings → Provider and the profile dialog all read it, so a list fetched in one place (Test
connection, or the toolbar's own fetch) shows in the others.

What is known: the provider's answer (ids with dates and lifecycle, app.core.agent.models) once
one came, else the catalogue's default model (app.core.agent.models.catalog); the saved model
is always offered too, so a choice is never dropped from its picker."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QComboBox

if TYPE_CHECKING:
    from app.core.agent.models.catalog import ModelInfo


class ModelList(QObject):
    """The fetched model list; ``changed`` when a new one arrived."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.infos: list[ModelInfo] = []

    def set_infos(self, infos: Sequence[ModelInfo]) -> None:
        """A provider answered: its models replace the list (an empty answer keeps the last
        one: a failed fetch tells nothing about the models)."""
        if infos:
            self.infos = list(infos)
            self.changed.emit()

    def ids(self, saved: str | None = None) -> list[str]:
        """The ids to offer, sorted, with ``saved`` (the profile's model) among them."""
        from app.core.agent.models.catalog import default_model  # with the pickers' first use

        known = {info.id for info in self.infos} or {default_model()}
        return sorted(known | ({saved} if saved else set()))

    def fill(self, combo: QComboBox, saved: str | None, shown: str | None = None) -> None:
        """``combo`` lists ``ids(saved)`` and shows ``shown`` (default: ``saved``), without
        emitting its signals (a refill is not the person's choice)."""
        combo.blockSignals(True)
        combo.clear()
        combo.addItems(self.ids(saved))
        combo.setCurrentText(shown if shown is not None else (saved or ""))
        combo.blockSignals(False)
