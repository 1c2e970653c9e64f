"""The AI panel's "Orchestration: [None ▼]" choice, above the tools: whether the profile's agent
may start sub-agents (app.core.orchestration_mode), and whether each waits for the person."""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from app.core.orchestration_mode import Orchestration
from app.core.store.profiles import ProfileRepository

log = logging.getLogger(__name__)


class OrchestrationChoice(QWidget):
    """The choice of the profile ``profile_id()``, saved as soon as it changes."""

    def __init__(self, profiles: ProfileRepository, profile_id: Callable[[], int],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._profiles = profiles
        self._profile_id = profile_id
        label = QLabel("Orchestration:")
        self.combo = QComboBox()
        self.combo.setObjectName("orchestration-choice")
        self.combo.setAccessibleName("Orchestration")
        for choice in Orchestration:
            self.combo.addItem(choice.label, choice.value)
            self.combo.setItemData(self.combo.count() - 1, choice.description,
                                   Qt.ItemDataRole.ToolTipRole)
        label.setBuddy(self.combo)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(label)
        row.addWidget(self.combo, 1)
        self.refresh()
        self.combo.currentIndexChanged.connect(self._chosen)

    def refresh(self) -> None:
        """Show the profile's choice (one row by its key: cheap on the GUI thread)."""
        try:
            current = self._profiles.get(self._profile_id()).orchestration
        except KeyError:
            current = Orchestration.NONE
        self.combo.blockSignals(True)
        self.combo.setCurrentIndex(max(0, self.combo.findData(current.value)))
        self.combo.setToolTip(current.description)
        self.combo.blockSignals(False)

    def _chosen(self, _index: int) -> None:
        choice = Orchestration.parse(self.combo.currentData())
        self.combo.setToolTip(choice.description)
        try:
            self._profiles.set_orchestration(self._profile_id(), choice)
        except KeyError:
            log.warning("the profile is gone; orchestration not saved")
