"""The app's semantic colours (danger, warning, success, …): the one place in app/ui that names
a colour (tests/unit/test_ui_colours.py keeps it so).

Each tone has a light and a dark variant, picked by the window colour of the application's
palette, and every text colour is leaned (markdown_style.lean_until_readable) until it reads on
what it is drawn on: WCAG 4.5 for text on the window and on a view's base, for text on the
tone's surface and for text on its solid (badge) colour, whatever the desktop theme's greys.
A style sheet built from tones is kept by ``follow_palette``, which builds it again when the
palette changes (the desktop switches between light and dark while the app runs).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QWidget

from app.ui.contrast import contrast_ratio, lean_until_readable
from app.ui.markup import escape

TEXT_CONTRAST = 4.5        # WCAG AA for body text
LARGE_TEXT_CONTRAST = 3.0  # WCAG AA for large or bold text, and for borders (non-text)
_WHITE, _BLACK = QColor(255, 255, 255), QColor(0, 0, 0)


class Tone(StrEnum):
    DANGER = "danger"            # errors, high risk, deny, failed
    WARNING = "warning"          # needs attention: ask, starting, not covered
    CAUTION = "caution"          # a stronger warning: no sandbox, a rule that widens access
    SUCCESS = "success"          # allowed, low risk, running, sandboxed
    INFO = "info"                # neutral explanations (the mode intro)
    MUTED = "muted"              # disabled or secondary entries
    REVIEW = "review"            # sent to the reviewers
    MATCH = "match"              # the find bar's matches
    CURRENT_MATCH = "current-match"


@dataclass(frozen=True)
class ToneColours:
    text: QColor        # text drawn straight on the window or a view's base
    surface: QColor     # a callout's background (notice, warning box, chip)
    on_surface: QColor  # text on ``surface``
    border: QColor      # a callout's border
    solid: QColor       # a filled badge's background
    on_solid: QColor    # text on ``solid``


# Per tone, for a light and for a dark window: text, surface, on surface, border, solid, on
# solid (GitHub Primer's light and dark scales).
_PRESETS: dict[Tone, tuple[str, str]] = {
    Tone.DANGER: ("#cf222e #ffebe9 #82071e #ff8182 #cf222e #ffffff",
                  "#ff7b72 #4a1b1e #ffdcd7 #f85149 #cf222e #ffffff"),
    Tone.WARNING: ("#9a6700 #fff8c5 #4d2d00 #d4a72c #d4a72c #1f2328",
                   "#e3b341 #3d3000 #f8e3a1 #bb8009 #d4a72c #1f2328"),
    Tone.CAUTION: ("#bc4c00 #fff1e5 #762c00 #fb8f44 #bc4c00 #ffffff",
                   "#ffa657 #3d1d00 #ffd8b5 #db6d28 #bc4c00 #ffffff"),
    Tone.SUCCESS: ("#1a7f37 #dafbe1 #0f5323 #4ac26b #1a7f37 #ffffff",
                   "#56d364 #12361f #aff5b4 #2ea043 #1a7f37 #ffffff"),
    Tone.INFO: ("#0969da #ddf4ff #0a3069 #54aeff #0969da #ffffff",
                "#79c0ff #0c2d6b #cae8ff #1f6feb #0969da #ffffff"),
    Tone.MUTED: ("#6e7781 #f6f8fa #1f2328 #d0d7de #57606a #ffffff",
                 "#9da7b1 #2d333b #e6edf3 #545d68 #57606a #ffffff"),
    Tone.REVIEW: ("#8250df #fbefff #512a97 #c297ff #8250df #ffffff",
                  "#d2a8ff #2e1f4e #e2d0ff #8957e5 #8250df #ffffff"),
    Tone.MATCH: ("#9a6700 #fff8c5 #1f2328 #d4a72c #d4a72c #1f2328",
                 "#e3b341 #5a4500 #ffffff #bb8009 #d4a72c #1f2328"),
    Tone.CURRENT_MATCH: ("#bc4c00 #ffb86c #1f2328 #fb8f44 #bc4c00 #ffffff",
                         "#ffa657 #9e4400 #ffffff #db6d28 #bc4c00 #ffffff"),
}


def is_dark(palette: QPalette | None = None) -> bool:
    """Whether the palette's window colour is dark: it contrasts more with white than black."""
    window = (palette or QGuiApplication.palette()).color(QPalette.ColorRole.Window)
    return _readable_on(window) == _WHITE


def tone(name: Tone, palette: QPalette | None = None) -> ToneColours:
    """``name``'s colours for ``palette`` (the application's by default)."""
    palette = palette or QGuiApplication.palette()
    return _tone(name, palette.color(QPalette.ColorRole.Window).rgb(),
                 palette.color(QPalette.ColorRole.Base).rgb(), is_dark(palette))


@functools.lru_cache(maxsize=64)
def _tone(name: Tone, window_rgb: int, base_rgb: int, dark: bool) -> ToneColours:
    text, surface, on_surface, border, solid, on_solid = (
        QColor(value) for value in _PRESETS[name][1 if dark else 0].split())
    toward = _WHITE if dark else _BLACK
    return ToneColours(
        text=lean_until_readable(text, (QColor.fromRgb(window_rgb), QColor.fromRgb(base_rgb)),
                                 toward, TEXT_CONTRAST),
        surface=surface,
        on_surface=lean_until_readable(on_surface, (surface,), toward, TEXT_CONTRAST),
        border=border, solid=solid,
        on_solid=lean_until_readable(on_solid, (solid,), _readable_on(solid), TEXT_CONTRAST))


def _readable_on(background: QColor) -> QColor:
    """White or black, whichever contrasts more with ``background``."""
    return _WHITE if contrast_ratio(background, _WHITE) > contrast_ratio(background, _BLACK) \
        else _BLACK


# -- style sheet pieces ---------------------------------------------------------------------------
# A surface sets the colour of every kind of text inside it: a style sheet's colour does not pass
# from a frame to its children, and a radio button or check box would keep the palette's text
# colour (light on a dark theme: invisible on a light surface).
_TEXT_CHILDREN = ("QLabel", "QRadioButton", "QCheckBox", "QToolButton")


def text_style(name: Tone, selector: str = "QLabel", extra: str = "") -> str:
    """``selector { color: <tone's text>; extra }``: tone-coloured text on the window."""
    return f"{selector} {{ color: {tone(name).text.name()}; {extra} }}"


def plain_text_style(name: Tone, extra: str = "") -> str:
    """The declarations alone (for a widget's own style sheet, without a selector)."""
    return f"color: {tone(name).text.name()}; {extra}"


def surface_style(name: Tone, selector: str, extra: str = "border-radius: 6px;") -> str:
    """The tone's surface, border and text for ``selector`` and for every text inside it."""
    colours = tone(name)
    children = ", ".join(f"{selector} {child}" for child in _TEXT_CHILDREN)
    return (f"{selector} {{ background: {colours.surface.name()}; "
            f"color: {colours.on_surface.name()}; "
            f"border: 1px solid {colours.border.name()}; {extra} }} "
            f"{children} {{ color: {colours.on_surface.name()}; background: transparent; "
            "border: none; }" + _indicators(selector, colours))


def _indicators(selector: str, colours: ToneColours) -> str:
    """Radio and check indicators drawn in the surface's own colours: the style would draw
    them in the palette's base (a dark circle on a light box, or the reverse)."""
    on, surface = colours.on_surface.name(), colours.surface.name()
    radio = f"{selector} QRadioButton::indicator"
    return (f" {radio} {{ width: 12px; height: 12px; border: 1px solid {on}; "
            f"background: {surface}; border-radius: 7px; }} "
            f"{radio}:checked {{ background: qradialgradient(cx: 0.5, cy: 0.5, radius: 0.5, "
            f"fx: 0.5, fy: 0.5, stop: 0 {on}, stop: 0.45 {on}, stop: 0.55 {surface}, "
            f"stop: 1 {surface}); }} "
            + _boxes(f"{selector} QCheckBox::indicator", on, surface, size=12))


def _boxes(indicator: str, frame: str, inside: str, size: int) -> str:
    """Square check indicators: ``frame`` around ``inside``, filled with ``frame`` when checked
    (half filled when partly)."""
    return (f" {indicator} {{ width: {size}px; height: {size}px; border: 1px solid {frame}; "
            f"background: {inside}; }} {indicator}:checked {{ padding: 2px; "
            f"background-clip: content; background-color: {frame}; }} "
            f"{indicator}:indeterminate {{ padding: 4px 2px; background-clip: content; "
            f"background-color: {frame}; }}")


def surface_declarations(name: Tone) -> str:
    """A surface's declarations alone (a label that is its own callout)."""
    colours = tone(name)
    return (f"background: {colours.surface.name()}; color: {colours.on_surface.name()}; "
            f"border: 1px solid {colours.border.name()};")


def solid_declarations(name: Tone) -> str:
    """A filled badge: the tone's solid colour with readable text on it."""
    colours = tone(name)
    return f"background: {colours.solid.name()}; color: {colours.on_solid.name()};"


def border_colour(name: Tone) -> str:
    return tone(name).border.name()


def span(name: Tone, html: str) -> str:
    """``html`` (already escaped) in the tone's text colour, for a rich-text label."""
    return f"<span style='color:{tone(name).text.name()}'>{html}</span>"


def text_span(name: Tone, text: str) -> str:
    return span(name, escape(text))


# -- building again when the palette changes ------------------------------------------------------
# Qt tells only visible widgets of a new palette: a hidden one catches up when it is shown.
_PALETTE_EVENTS = (QEvent.Type.ApplicationPaletteChange, QEvent.Type.PaletteChange,
                   QEvent.Type.ThemeChange, QEvent.Type.Show)
_FOLLOWER_NAME = "tones-style-follower"
_LISTENER_NAME = "tones-palette-listener"


class PaletteFollower(QObject):
    """Calls ``on_change`` at every palette change of a widget or of the application (and
    when the widget is shown, as it may have missed one while hidden)."""

    def __init__(self, widget: QWidget, on_change: Callable[[], None], name: str) -> None:
        super().__init__(widget)
        self.setObjectName(name)
        self.on_change = on_change
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in _PALETTE_EVENTS:
            self.on_change()
        return False


def on_palette_change(widget: QWidget, on_change: Callable[[], None]) -> PaletteFollower:
    """Call ``on_change`` whenever the palette changes (colours set item by item, say)."""
    return PaletteFollower(widget, on_change, _LISTENER_NAME)


StyleSource = str | Callable[[], str]


def _set_style(widget: QWidget, build: Callable[[], str]) -> None:
    # The sheet itself changes the widget's palette: set only when it differs, or it loops.
    style = build()
    if widget.styleSheet() != style:
        widget.setStyleSheet(style)


def follow_palette(widget: QWidget, build: StyleSource) -> None:
    """Give ``widget`` the style sheet ``build()`` now and after every palette change (a
    later call replaces the builder: a label that turns from warning to error; a plain string
    is a sheet without tones, which replaces a toned one for good)."""
    if isinstance(build, str):
        build = functools.partial(str, build)
    apply = functools.partial(_set_style, widget, build)
    follower = widget.findChild(PaletteFollower, _FOLLOWER_NAME,
                                Qt.FindChildOption.FindDirectChildrenOnly)
    if follower is None:
        PaletteFollower(widget, apply, _FOLLOWER_NAME)
    else:
        follower.on_change = apply
    apply()


def tone_text(widget: QWidget, name: Tone | None, extra: str = "") -> None:
    """``widget``'s own text in the tone's text colour (with ``extra`` declarations: a font
    size, a weight), kept across palette changes; None: the palette's text again."""
    follow_palette(widget, "" if name is None else
                   functools.partial(plain_text_style, name, extra))


_CALLOUT_SHAPE = "border-radius: 6px; padding: 6px;"


def callout_style(name: Tone, extra: str = _CALLOUT_SHAPE) -> str:
    """A label that is its own callout: the tone's surface, text and border."""
    return f"QLabel {{ {surface_declarations(name)} {extra} }}"


def tone_callout(widget: QWidget, name: Tone, extra: str = _CALLOUT_SHAPE) -> None:
    """``callout_style`` on ``widget``, kept across palette changes."""
    follow_palette(widget, functools.partial(callout_style, name, extra))


def _check_box_style(selector: str) -> str:
    """On a dark palette, check boxes of ``selector``'s items drawn in the palette's text
    colour (Fusion draws their frame from the window colour darkened, which vanishes on a dark
    theme's base); on a light one the style's own."""
    if not is_dark():
        return ""
    palette = QGuiApplication.palette()
    return _boxes(f"{selector}::indicator", palette.color(QPalette.ColorRole.Text).name(),
                  palette.color(QPalette.ColorRole.Base).name(), size=11)


def view_check_boxes(view: QWidget) -> None:
    """Check boxes in ``view``'s items (the tools list, the rules) visible on every palette."""
    follow_palette(view, functools.partial(_check_box_style, type(view).__name__))

