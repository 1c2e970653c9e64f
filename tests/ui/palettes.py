"""A light or dark application palette for a test, put back afterwards."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication


def palette(base: str, text: str) -> QPalette:
    made = QPalette()
    for role in (QPalette.ColorRole.Base, QPalette.ColorRole.AlternateBase,
                 QPalette.ColorRole.Window):
        made.setColor(role, QColor(base))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText):
        made.setColor(role, QColor(text))
    return made


@contextlib.contextmanager
def application_palette(base: str, text: str) -> Iterator[QPalette]:
    """The app's palette (its light or dark mode) is ``base`` and ``text`` inside."""
    application = QApplication.instance()
    assert isinstance(application, QApplication)
    before = application.palette()
    application.setPalette(palette(base, text))
    try:
        yield application.palette()
    finally:
        application.setPalette(before)
