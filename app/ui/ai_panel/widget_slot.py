"""A place in the AI panel's layout that a part fills with widgets of its own (the banners above
the conversation row, the conversation list under it): the panel decides where the place is,
the part only what goes in it."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWidget


class WidgetSlot:
    """A column the panel has placed; parts add widgets to it, at its top or its end."""

    def __init__(self, spacing: int | None = None) -> None:
        self.layout = QVBoxLayout()
        self.layout.setContentsMargins(0, 0, 0, 0)
        if spacing is not None:
            self.layout.setSpacing(spacing)

    def add(self, widget: QWidget) -> None:
        self.layout.addWidget(widget)

    def add_first(self, widget: QWidget) -> None:
        self.layout.insertWidget(0, widget)
