"""A widget of the AI panel that the first paint does not show (the edit banner, the context
bar): made and placed by the first event that needs it, so the ready window does not wait
for it (every widget made before ready is start-up time)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from PySide6.QtWidgets import QBoxLayout, QWidget

from app.ui.tab_focus import chain_end, join_chain_after

W = TypeVar("W", bound=QWidget)


class OnDemand(Generic[W]):
    """``widget``: made by ``make`` and put in its place by ``place`` on first use; ``built``:
    it, or None while nothing needed it (hiding or clearing it is then nothing to do)."""

    def __init__(self, make: Callable[[], W], place: Callable[[W], None]) -> None:
        self._make = make
        self._place = place
        self._widget: W | None = None

    @property
    def built(self) -> W | None:
        return self._widget

    @property
    def widget(self) -> W:
        if self._widget is None:
            widget = self._widget = self._make()
            self._place(widget)
        return self._widget


def place_by(beside: QWidget, rows: int, tab_after: QWidget) -> Callable[[QWidget], None]:
    """Places a widget in ``beside``'s column ``rows`` rows below it (0: right above it), and
    in the Tab chain right after ``tab_after`` and its controls (reading order is kept by the
    widgets made with the panel; one made later would join the end of the window's chain)."""

    def place(widget: QWidget) -> None:
        parent = beside.parentWidget()
        column = parent.layout() if parent is not None else None
        assert isinstance(column, QBoxLayout), "placed once the panel is laid out"
        column.insertWidget(column.indexOf(beside) + rows, widget)
        join_chain_after(chain_end(tab_after), widget)

    return place
