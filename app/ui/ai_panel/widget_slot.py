"""A place in the AI panel's layout that a part fills with widgets of its own (the banners above
the conversation row, the conversation list under it): the panel decides where the place is,
the part only what goes in it."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QVBoxLayout, QWidget
from shiboken6 import isValid

from app.ui.tab_focus import chain_end, join_chain_after


class WidgetSlot:
    """A column the panel has placed; parts add widgets to it, at its top or its end. Tab
    reaches them after ``tab_after()`` (the control before the place), in their order."""

    def __init__(self, spacing: int | None = None, *,
                 tab_after: Callable[[], QWidget] | None = None) -> None:
        self._tab_after = tab_after
        self._placed: list[QWidget] = []
        self.layout = QVBoxLayout()
        self.layout.setContentsMargins(0, 0, 0, 0)
        if spacing is not None:
            self.layout.setSpacing(spacing)

    def add(self, widget: QWidget) -> None:
        # Not read back with itemAt (stale QLayoutItem wrappers: transcript_view.items)
        above = [w for w in self._placed if isValid(w) and self.layout.indexOf(w) >= 0]
        self._placed = [*above, widget]
        self.layout.addWidget(widget)
        if self._tab_after is not None:
            join_chain_after(chain_end(above[-1]) if above else self._tab_after(), widget)

    def add_first(self, widget: QWidget) -> None:
        self.layout.insertWidget(0, widget)
        self._placed.insert(0, widget)
        if self._tab_after is not None:
            join_chain_after(self._tab_after(), widget)
