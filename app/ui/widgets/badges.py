"""Small coloured labels: risk, decision, category, server. A decision badge shows the one
vocabulary of ``app.core.outcomes.Verdict`` ("allowed by rule", "approved by you", "declined",
…), coloured by its tone."""

from __future__ import annotations

import functools

from PySide6.QtWidgets import QLabel

from app.core.outcomes import Verdict
from app.ui.tones import Tone, follow_palette, solid_declarations, tone

_TONES = {
    "high": Tone.DANGER,
    "low": Tone.SUCCESS,
    "allow": Tone.SUCCESS,
    "ask": Tone.WARNING,
    "deny": Tone.DANGER,
    "review": Tone.REVIEW,
    "neutral": Tone.MUTED,
}
_PILL = "border-radius: 7px; padding: 1px 7px; font-size: 11px; font-weight: 600;"


def pill_style(name: Tone) -> str:
    """A filled badge in the tone's solid colour."""
    return f"QLabel {{ {solid_declarations(name)} border: none; {_PILL} }}"


def outlined_pill_style(name: Tone) -> str:
    """A quieter badge: the tone's text colour and a border of it, on the window."""
    colour = tone(name).text.name()
    return (f"QLabel {{ color: {colour}; background: transparent; "
            f"border: 1px solid {colour}; {_PILL} }}")


def _style(kind: str) -> str:
    return pill_style(_TONES.get(kind, Tone.MUTED))


def badge(text: str, kind: str = "neutral", tooltip: str = "") -> QLabel:
    label = QLabel(text)
    label.setObjectName(f"badge-{kind}")
    follow_palette(label, functools.partial(_style, kind))
    if tooltip:
        label.setToolTip(tooltip)
    return label


def show_verdict(label: QLabel, verdict: Verdict) -> None:
    """Make ``label`` a decision badge saying ``verdict``."""
    label.setText(verdict.value)
    label.setObjectName(f"badge-{verdict.tone}")
    follow_palette(label, functools.partial(_style, verdict.tone))
