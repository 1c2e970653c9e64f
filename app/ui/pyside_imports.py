"""Undo PySide6's replacement of ``builtins.__import__``.

PySide6 replaces ``__import__`` to support ``from __feature__ import snake_case`` (an opt-in
naming style this app does not use). The replacement runs Python code on every import statement
and, for every module imported afterwards, reads the module's whole source through ``inspect``
to see whether it mentions PySide6, keeping every line in ``linecache`` for the life of the
process. Measured here: importing the Anthropic SDK after PySide6 took 2.2 s and 89 MB with the
hook, 1.5 s and 60 MB without; the app's own start-up held 10 MB of cached source lines.

With no module selecting a feature, PySide6 keeps using its default (no feature) for modules
it has not classified, so restoring the original import changes nothing else. Should the app
ever want ``__feature__``, it must drop this.
"""

from __future__ import annotations

import builtins

import PySide6.QtCore  # noqa: F401  (installs the hook being undone)


def restore_plain_imports() -> bool:
    """Put Python's own ``__import__`` back; False when PySide6 did not replace it."""
    original = getattr(builtins, "__orig_import__", None)
    if original is None or builtins.__import__ is original:
        return False
    builtins.__import__ = original
    return True
