"""Small coloured labels: risk, decision, category, server."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

_COLOURS = {
    "high": ("#ffffff", "#cf222e"),
    "low": ("#ffffff", "#1a7f37"),
    "allow": ("#ffffff", "#1a7f37"),
    "ask": ("#1f2328", "#d4a72c"),
    "deny": ("#ffffff", "#cf222e"),
    "neutral": ("#ffffff", "#57606a"),
}


def badge(text: str, kind: str = "neutral", tooltip: str = "") -> QLabel:
    fg, bg = _COLOURS.get(kind, _COLOURS["neutral"])
    label = QLabel(text)
    label.setObjectName(f"badge-{kind}")
    label.setStyleSheet(f"QLabel {{ color: {fg}; background: {bg}; border-radius: 7px;"
                        " padding: 1px 7px; font-size: 11px; font-weight: 600; }")
    if tooltip:
        label.setToolTip(tooltip)
    return label
