"""Read a few settings before the store is open (window size and place at start-up).

Opening the store creates and migrates the database; the window should not wait for
that to appear where it was last time. This reads the ``settings`` table with the standard
library only and never creates, migrates or writes anything: a missing or unreadable database
just means "no saved settings".
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def read_settings_early(path: str | Path, keys: Iterable[str]) -> dict[str, Any]:
    """``{key: value}`` for the ``keys`` that are stored; ``{}`` when nothing can be read."""
    wanted = list(keys)
    path = Path(path)
    if not wanted or not path.is_file():
        return {}
    try:
        # mode=rw: fail instead of creating a file; the store creates and migrates it later.
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, timeout=1.0)
        try:
            marks = ",".join("?" * len(wanted))
            rows = conn.execute(f"SELECT key, value FROM settings WHERE key IN ({marks})",
                                wanted).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:  # no settings table yet, a locked or damaged file: the store decides
        return {}
    found: dict[str, Any] = {}
    for key, text in rows:
        try:
            found[key] = json.loads(text)
        except (TypeError, ValueError):
            continue
    return found
