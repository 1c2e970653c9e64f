"""Finds Tebiki's data files (icons, the .desktop template) from source, a wheel or a frozen bundle.

The files live in the repository's top-level ``resources/`` folder. Where that folder is depends on
how Tebiki runs:

- frozen (PyInstaller): ``<sys._MEIPASS>/resources`` (the spec copies it there);
- from a source checkout or an editable install: ``<repo>/resources``, next to the ``app`` package;
- from a wheel (``pip``/``pipx install .``): ``<sys.prefix>/share/tebiki/resources``, if the
  wheel ships them as data files.

This is UI support code (it builds a ``QIcon``), so it lives outside ``app.core``.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtGui import QIcon

ICON_NAME = "tebiki"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def resource_roots() -> list[Path]:
    """Candidate ``resources`` folders, most specific first."""
    roots: list[Path] = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        roots.append(Path(bundle) / "resources")
    roots.append(Path(__file__).resolve().parent.parent / "resources")
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        roots.append(Path(prefix) / "share" / "tebiki" / "resources")
    return roots


def resource_path(name: str) -> Path:
    """The path of resource ``name`` (e.g. ``"icons/tebiki.svg"``), wherever Tebiki runs from.

    Raises FileNotFoundError, naming every place looked in, when no root has it.
    """
    relative = Path(name)
    if relative.is_absolute() or ".." in relative.parts:
        raise ValueError(f"resource names are relative paths inside resources/: {name!r}")
    roots = resource_roots()
    for root in roots:
        candidate = root / relative
        if candidate.exists():
            return candidate
    searched = ", ".join(str(root) for root in roots)
    raise FileNotFoundError(f"resource {name!r} not found (looked in: {searched})")


@cache
def app_icon() -> QIcon:
    """The application icon with every rendered size; falls back to the desktop theme's icon.

    Needs a QGuiApplication. Cached: a QIcon is cheap to share, and loading it once keeps startup
    from touching the disk again for every window.
    """
    from PySide6.QtGui import QIcon

    icon = QIcon()
    for size in ICON_SIZES:
        try:
            icon.addFile(str(resource_path(f"icons/{ICON_NAME}-{size}.png")))
        except FileNotFoundError:
            continue
    if icon.isNull():
        icon = QIcon.fromTheme(ICON_NAME)
    return icon
