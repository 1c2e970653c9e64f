"""The approval dialog's note for a call its tool's configuration refused: what approving
changes, for this call or (ticked) for good."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from app.core.tools.capability_lift import CapabilityLift
from app.core.visible_text import make_visible
from app.ui.markup import escape

_STYLE = ("QWidget#approval-lift { background: palette(alternate-base); border: 1px solid "
          "palette(mid); border-radius: 6px; }")


class LiftNote(QWidget):
    """"This call is outside what write_file may do: …  Approving runs it once with this
    change: add “src” to Write folders.  [ ] Keep this in write_file's configuration"."""

    def __init__(self, tool_name: str, lift: CapabilityLift,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approval-lift")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setStyleSheet(_STYLE)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        tool = escape(make_visible(tool_name))
        refusal = escape(make_visible(lift.refusal.split("\n", 1)[0]))
        self.text = QLabel(
            f"<b>Outside what {tool} is configured to do</b>: {refusal}<br>"
            f"Approving runs this call once with one change: "
            f"<b>{escape(make_visible(lift.summary))}</b>.")
        self.text.setObjectName("approval-lift-text")
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.text)
        self.keep = QCheckBox(f"Keep this change in {make_visible(tool_name)}'s configuration")
        self.keep.setObjectName("approval-keep-lift")
        self.keep.setAccessibleName("Keep the configuration change")
        layout.addWidget(self.keep)
