"""Where the main window goes on its screen: its first start's size and place, and back onto
the screen when a saved place, a scale change or a wider panel would put it off the edge (Send
and Stop out of reach)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QScreen
from PySide6.QtWidgets import QWidget


def first_start_size(screen: QScreen | None) -> QSize:
    """1200x780, or 90% of the screen's free area when that is smaller (a small screen, or a
    1600x1000 one at 200%): the frame and title bar are not known before the window shows."""
    if screen is None:
        return QSize(1200, 780)
    available = screen.availableGeometry()
    return QSize(min(1200, available.width() * 9 // 10), min(780, available.height() * 9 // 10))


def place_for_first_start(window: QWidget) -> None:
    """``first_start_size``, centred on the screen: placed by the window manager, a window as
    wide as a small screen ran off its right edge."""
    window.resize(first_start_size(window.screen()))
    if (screen := window.screen()) is not None:
        centre = screen.availableGeometry().center()
        window.move(centre.x() - window.width() // 2, centre.y() - window.height() // 2)


def fit_to_screen(window: QWidget, *, shrink: bool = True) -> None:
    """Shrink (unless not ``shrink``) and move the window (frame included) into its screen's
    available area; a maximised or full-screen window is the window manager's to place."""
    if window.windowState() & (Qt.WindowState.WindowMaximized |
                               Qt.WindowState.WindowFullScreen):
        return
    screen: QScreen | None = window.screen()  # None while the window is on no screen
    if screen is None:
        return
    if (layout := window.layout()) is not None:
        layout.activate()  # what was just attached may have widened its minimum
    available = screen.availableGeometry()
    frame, inner = window.frameGeometry(), window.geometry()
    # The frame's extra size (title bar, borders); known once the window is shown.
    extra_w, extra_h = frame.width() - inner.width(), frame.height() - inner.height()
    width = max(min(inner.width(), available.width() - extra_w), window.minimumWidth())
    height = max(min(inner.height(), available.height() - extra_h), window.minimumHeight())
    left = min(max(frame.x(), available.x()), available.right() + 1 - width - extra_w)
    top = min(max(frame.y(), available.y()), available.bottom() + 1 - height - extra_h)
    left, top = max(left, available.x()), max(top, available.y())
    if not shrink:
        width, height = inner.width(), inner.height()
    elif (width, height) != (inner.width(), inner.height()):
        window.resize(width, height)
    if (left, top) != (frame.x(), frame.y()):
        window.move(left, top)  # move() places the frame's top-left corner
