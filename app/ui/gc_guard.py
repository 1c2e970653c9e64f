"""Garbage collection only on the GUI thread.

Python's cyclic collector runs in whichever thread happens to allocate, worker threads
included. If it frees a QObject there, Qt's per-thread timer and event bookkeeping is corrupted
and the app crashes later, far from the cause. So automatic collection is switched off and a
GUI-thread timer collects instead, using the normal generation thresholds (as qutebrowser does).
It skips its turn while a worker thread imports libraries (``app.core.warmup.importing``):
what an import allocates is permanent and frozen afterwards, and walking it cost 14-26 ms of
GUI time per collection.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

from app.core.warmup import importing

_INTERVAL_MS = 500


class MainThreadGarbageCollector(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        gc.disable()
        self._timer = QTimer(self)
        self._timer.setInterval(_INTERVAL_MS)
        self._timer.timeout.connect(self.check)
        self._timer.start()

    def check(self) -> None:
        if importing():
            return
        threshold0, threshold1, threshold2 = gc.get_threshold()
        count0, count1, count2 = gc.get_count()
        if count0 > threshold0:
            generation = 0
            if count1 > threshold1:
                generation = 2 if count2 > threshold2 else 1
            gc.collect(generation)

    def stop(self) -> None:
        self._timer.stop()
        gc.enable()
