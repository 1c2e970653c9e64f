"""Paths learnt per project folder: written by the thread that reads a project's secrets,
read by the flow tracking of every conversation on that project."""

from __future__ import annotations

import threading
from pathlib import Path

__all__ = ["LearntPaths"]


class LearntPaths:
    """For each project folder (resolved), the paths learnt there; none before."""

    def __init__(self) -> None:
        self._by_root: dict[Path, tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def remember(self, root: Path, paths: tuple[str, ...]) -> None:
        with self._lock:
            self._by_root[root.resolve()] = paths

    def of(self, root: Path) -> tuple[str, ...]:
        with self._lock:
            return self._by_root.get(root.resolve(), ())
