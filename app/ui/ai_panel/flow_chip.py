"""The flow chip of the AI panel: what the conversation has read, as its flow labels say
(app.core.permissions.flow) — "clean" or the most serious label's text — with the label's
colour tone and explanation, the sources in the tooltip, and a small menu: reset the labels
of this conversation, and trust the project folder (for the conversations started after)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from app.core.permissions.flow_labels import CLEAN, CLEAN_EXPLANATION, FlowLabel
from app.core.visible_text import make_visible
from app.ui.tones import Tone, follow_palette, solid_declarations, surface_declarations, tone

if TYPE_CHECKING:
    from app.core.permissions.flow import FlowSource


MAX_TOOLTIP_SOURCES = 8


def _label_shown(summary: str) -> FlowLabel | None:
    return next((label for label in FlowLabel if label.label == summary), None)


def _colours(summary: str) -> str:
    """The chip's colour declarations, by how loud its label is (FlowLabel.tone): clean is a
    success surface, danger a solid red, and a warning (or an unknown summary) a warning
    surface."""
    if summary == CLEAN:
        return surface_declarations(Tone.SUCCESS)
    label = _label_shown(summary)
    if label is not None and label.tone == "danger":
        colours = tone(Tone.DANGER)
        return (f"{solid_declarations(Tone.DANGER)} "
                f"border: 1px solid {colours.border.name()};")
    return surface_declarations(Tone.WARNING)


def flow_tooltip(summary: str, sources: Iterable[FlowSource]) -> str:
    """Plain text: what the summary means, then each label's sources (``describe()``)."""
    shown = _label_shown(summary)
    lines = [CLEAN_EXPLANATION if summary == CLEAN else
             shown.explanation if shown is not None else summary]
    sources = list(sources)
    if sources:
        for label in FlowLabel:
            found = [s for s in sources if s.label is label]
            if not found:
                continue
            lines.append("")
            lines.append(f"{label.heading}:")
            lines += [f"  • {make_visible(s.describe())}" for s in found[:MAX_TOOLTIP_SOURCES]]
            if len(found) > MAX_TOOLTIP_SOURCES:
                lines.append(f"  … and {len(found) - MAX_TOOLTIP_SOURCES} more")
    lines.append("")
    lines.append("Click for options.")
    return "\n".join(lines)


class FlowChip(QToolButton):
    """``reset_requested`` when the person resets the labels; ``trust_toggled(bool)`` when they
    mark the project folder trusted or not. The owner updates the chip with ``set_flow`` and
    ``set_trust``."""

    reset_requested = Signal()
    trust_toggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("flow-chip")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.summary = ""
        self.sources: tuple[FlowSource, ...] = ()
        self.menu_ = QMenu(self)
        self.reset_action = QAction("Reset labels for this conversation", self)
        self.reset_action.setObjectName("flow-reset")
        self.reset_action.setToolTip("Forget what this conversation has read, e.g. before "
                                     "starting a different task in it.")
        self.trust_action = QAction("Trust this project folder", self)
        self.trust_action.setObjectName("flow-trust")
        self.trust_action.setCheckable(True)
        self.trust_note = QAction("Applies to conversations started or reopened after the "
                                  "change", self)
        self.trust_note.setEnabled(False)
        self.menu_.addAction(self.reset_action)
        self.menu_.addSeparator()
        self.menu_.addAction(self.trust_action)
        self.menu_.addAction(self.trust_note)
        self.menu_.setToolTipsVisible(True)
        self.setMenu(self.menu_)
        self.reset_action.triggered.connect(lambda: self.reset_requested.emit())
        self.trust_action.triggered.connect(lambda checked: self.trust_toggled.emit(checked))
        self.set_flow(CLEAN, ())
        self.set_trust(None, False)

    def set_flow(self, summary: str, sources: Iterable[FlowSource], *,
                 resettable: bool = True) -> None:
        self.summary = summary
        self.sources = tuple(sources)
        mark = "●" if summary == CLEAN else "⚠"
        self.setText(f"{mark} {summary}")
        follow_palette(self, lambda: (
            f"QToolButton {{ {_colours(summary)} "
            "border-radius: 9px; padding: 1px 8px; font-size: 11px; font-weight: 600; } "
            "QToolButton::menu-indicator { image: none; width: 0px; }"))
        self.setToolTip(flow_tooltip(summary, self.sources))
        self.reset_action.setEnabled(resettable and bool(self.sources))

    def set_trust(self, project: str | None, trusted: bool) -> None:
        """``project``: the open folder's name (None: no folder open, nothing to trust)."""
        self.trust_action.setEnabled(project is not None)
        self.trust_action.setChecked(trusted and project is not None)
        shown = make_visible(project).replace("&", "&&") if project else ""
        self.trust_action.setText(f"Trust this project folder ({shown})" if shown
                                  else "Trust this project folder")
