"""A module whose import waits until a test lets it go (``GATE``): stands in for a slow import
so a test can see what the GUI thread does meanwhile."""

from __future__ import annotations

import threading

ENTERED = threading.Event()
GATE = threading.Event()
