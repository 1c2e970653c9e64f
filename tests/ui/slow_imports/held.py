"""Importing this waits for ``tests.ui.slow_imports.GATE`` (at most 30 s)."""

from tests.ui.slow_imports import ENTERED, GATE

ENTERED.set()
GATE.wait(30)
