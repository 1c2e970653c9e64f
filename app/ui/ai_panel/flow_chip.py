"""The flow chip of the AI panel: what the conversation has read, as its flow labels say
(app.core.permissions.flow) — "clean", "read sensitive", "untrusted content" or "read outside
the project" — with a colour, the sources in the tooltip, and a small menu: reset the labels
of this conversation, and trust the project folder (for the conversations started after)."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from app.core.visible_text import make_visible

if TYPE_CHECKING:
    from app.core.permissions.flow import FlowSource

# A new conversation is "clean": the chip shows that without the flow labels' module (and the
# secret matchers it imports, ~15 ms), which loads with the first labels (after ready).
_CLEAN = "clean"
_CLEAN_COLOURS = ("#0f5323", "#dafbe1", "#4ac26b")  # (text colour, background, border)
_WARNING_COLOURS = ("#4d2d00", "#fff8c5", "#d4a72c")
_CLEAN_EXPLAINED = "Nothing sensitive or untrusted has been read in this conversation."

MAX_TOOLTIP_SOURCES = 8


@functools.cache
def _labels_colours() -> dict[str, tuple[str, str, str]]:
    from app.core.permissions.flow import FlowLabel

    return {FlowLabel.READ_SENSITIVE.label: ("#ffffff", "#cf222e", "#a40e26"),
            FlowLabel.UNTRUSTED.label: _WARNING_COLOURS,
            FlowLabel.READ_OUTSIDE.label: _WARNING_COLOURS}


@functools.cache
def _labels_explained() -> dict[str, str]:
    from app.core.permissions.flow import FlowLabel

    return {
        FlowLabel.READ_SENSITIVE.label: "This conversation read a secret: calls that can send "
                                        "data out ask first, whatever rule allows them.",
        FlowLabel.UNTRUSTED.label: "This conversation took in content that could carry "
                                   "instructions (web pages, tool results, files of an "
                                   "untrusted project).",
        FlowLabel.READ_OUTSIDE.label: "This conversation read files outside the project.",
    }


def _colours(summary: str) -> tuple[str, str, str]:
    """(text colour, background, border); an unknown summary looks like a warning."""
    return _CLEAN_COLOURS if summary == _CLEAN else _labels_colours().get(summary,
                                                                          _WARNING_COLOURS)


def flow_tooltip(summary: str, sources: Iterable[FlowSource]) -> str:
    """Plain text: what the summary means, then each label's sources (``describe()``)."""
    lines = [_CLEAN_EXPLAINED if summary == _CLEAN else
             _labels_explained().get(summary, summary)]
    sources = list(sources)
    if sources:
        from app.core.permissions.flow import FlowLabel

        for label in FlowLabel:
            found = [s for s in sources if s.label is label]
            if not found:
                continue
            lines.append("")
            lines.append(f"{label.label[:1].upper()}{label.label[1:]}:")
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
        self.set_flow("clean", ())
        self.set_trust(None, False)

    def set_flow(self, summary: str, sources: Iterable[FlowSource], *,
                 resettable: bool = True) -> None:
        self.summary = summary
        self.sources = tuple(sources)
        fg, bg, border = _colours(summary)
        mark = "●" if summary == _CLEAN else "⚠"
        self.setText(f"{mark} {summary}")
        self.setStyleSheet(
            f"QToolButton {{ color: {fg}; background: {bg}; border: 1px solid {border}; "
            "border-radius: 9px; padding: 1px 8px; font-size: 11px; font-weight: 600; } "
            "QToolButton::menu-indicator { image: none; width: 0px; }")
        self.setToolTip(flow_tooltip(summary, self.sources))
        self.reset_action.setEnabled(resettable and bool(self.sources))

    def set_trust(self, project: str | None, trusted: bool) -> None:
        """``project``: the open folder's name (None: no folder open, nothing to trust)."""
        self.trust_action.setEnabled(project is not None)
        self.trust_action.setChecked(trusted and project is not None)
        shown = make_visible(project).replace("&", "&&") if project else ""
        self.trust_action.setText(f"Trust this project folder ({shown})" if shown
                                  else "Trust this project folder")
