"""Small coloured labels: risk, decision, category, server. A decision badge shows the one
vocabulary of ``app.core.outcomes.Verdict`` ("allowed by rule", "approved by you", "declined",
…), coloured by its tone."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from app.core.outcomes import Verdict

_COLOURS = {
    "high": ("#ffffff", "#cf222e"),
    "low": ("#ffffff", "#1a7f37"),
    "allow": ("#ffffff", "#1a7f37"),
    "ask": ("#1f2328", "#d4a72c"),
    "deny": ("#ffffff", "#cf222e"),
    "review": ("#ffffff", "#8250df"),
    "neutral": ("#ffffff", "#57606a"),
}


def _style(kind: str) -> str:
    fg, bg = _COLOURS.get(kind, _COLOURS["neutral"])
    return (f"QLabel {{ color: {fg}; background: {bg}; border-radius: 7px;"
            " padding: 1px 7px; font-size: 11px; font-weight: 600; }")


def badge(text: str, kind: str = "neutral", tooltip: str = "") -> QLabel:
    label = QLabel(text)
    label.setObjectName(f"badge-{kind}")
    label.setStyleSheet(_style(kind))
    if tooltip:
        label.setToolTip(tooltip)
    return label


def show_verdict(label: QLabel, verdict: Verdict) -> None:
    """Make ``label`` a decision badge saying ``verdict``."""
    label.setText(verdict.value)
    label.setObjectName(f"badge-{verdict.tone}")
    label.setStyleSheet(_style(verdict.tone))
