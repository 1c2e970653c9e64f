"""A dialog's row of answer buttons to a server's request, right-aligned, none of them the
default: Enter never answers for the person (they click)."""

from __future__ import annotations

from PySide6.QtWidgets import QBoxLayout, QHBoxLayout, QPushButton


def answer_buttons(layout: QBoxLayout, *labels: str) -> list[QPushButton]:
    """Buttons with ``labels``, in that order, in a new row at the end of ``layout``."""
    row = QHBoxLayout()
    row.addStretch(1)
    buttons = []
    for label in labels:
        button = QPushButton(label)
        button.setAutoDefault(False)
        button.setDefault(False)
        row.addWidget(button)
        buttons.append(button)
    layout.addLayout(row)
    return buttons
