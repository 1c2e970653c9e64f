"""Colour arithmetic for readable text: WCAG luminance and contrast, and a colour mixed toward
another. Shared by the app's tones (app.ui.tones) and the Markdown styles, and light to import:
the ready window's banners use it."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QColor


def mix(base: QColor, toward: QColor, amount: float) -> QColor:
    """``base`` moved ``amount`` (0 to 1) of the way toward ``toward``."""
    return QColor.fromRgbF(
        base.redF() + (toward.redF() - base.redF()) * amount,
        base.greenF() + (toward.greenF() - base.greenF()) * amount,
        base.blueF() + (toward.blueF() - base.blueF()) * amount)


def luminance(color: QColor) -> float:
    """WCAG's relative luminance (0 for black, 1 for white)."""
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4
    return (0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF())
            + 0.0722 * channel(color.blueF()))


def contrast_ratio(a: QColor, b: QColor) -> float:
    """WCAG's contrast ratio of two colours (1 to 21; 4.5 reads as body text)."""
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def lean_until_readable(color: QColor, backgrounds: Sequence[QColor], toward: QColor,
                        minimum: float) -> QColor:
    """``color``, leaned toward ``toward`` (the text colour, white or black) in tenths until
    its contrast with every one of ``backgrounds`` reaches ``minimum``; ``toward`` at worst."""
    shown = color
    for step in range(1, 11):
        if min(contrast_ratio(shown, background) for background in backgrounds) >= minimum:
            break
        shown = mix(color, toward, step / 10)
    return shown
