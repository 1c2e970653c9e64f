"""The first-run panel at the top of the AI panel: choose a permission mode.

Shown (never modal: the window stays usable behind it) until the person has chosen a mode once,
here or in the toolbar's Mode picker; the AI panel's mode choice (app.ui.ai_panel.mode_choice)
remembers that choice in the settings and saves the mode to the current agent profile.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from app.core.permission_mode import PermissionMode
from app.ui.tones import Tone, follow_palette, surface_style


def _style() -> str:
    # The radio buttons' labels too: on a dark palette they would keep its light text colour.
    return surface_style(Tone.INFO, "QFrame#mode-intro") + (
        " QFrame#mode-intro QLabel#mode-intro-hint { font-size: 11px; }")


class ModeIntro(QFrame):
    """The three modes as radio buttons with their one-sentence descriptions and "Use this
    mode". ``chosen`` carries the mode's value when the person confirms."""

    chosen = Signal(str)

    def __init__(self, current: PermissionMode = PermissionMode.ASK,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mode-intro")
        follow_palette(self, _style)
        title = QLabel("<b>How should the agent handle tool calls that no permission rule "
                       "decides?</b>")
        title.setObjectName("mode-intro-title")
        title.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(4)
        layout.addWidget(title)
        self.group = QButtonGroup(self)
        self.buttons: dict[PermissionMode, QRadioButton] = {}
        for mode in PermissionMode:
            button = QRadioButton(mode.label)
            button.setObjectName(f"mode-intro-{mode.value}")
            font = button.font()
            font.setBold(True)
            button.setFont(font)
            description = QLabel(mode.description)
            description.setObjectName(f"mode-intro-{mode.value}-description")
            description.setWordWrap(True)
            description.setTextFormat(Qt.TextFormat.PlainText)
            description.setContentsMargins(22, 0, 0, 2)  # under the radio's text
            self.group.addButton(button)
            self.buttons[mode] = button
            layout.addWidget(button)
            layout.addWidget(description)
        self.use_button = QPushButton("Use this mode")
        self.use_button.setObjectName("mode-intro-use")
        hint = QLabel("You can change it at any time with the Mode picker in the toolbar; it "
                      "applies from the next message.")
        hint.setWordWrap(True)
        hint.setObjectName("mode-intro-hint")
        row = QHBoxLayout()
        row.addWidget(hint, 1)
        row.addWidget(self.use_button)
        layout.addLayout(row)
        self.select(current)
        self.use_button.clicked.connect(lambda: self.chosen.emit(self.selected().value))

    def select(self, mode: PermissionMode) -> None:
        self.buttons[PermissionMode.parse(mode)].setChecked(True)

    def selected(self) -> PermissionMode:
        for mode, button in self.buttons.items():
            if button.isChecked():
                return mode
        return PermissionMode.ASK
