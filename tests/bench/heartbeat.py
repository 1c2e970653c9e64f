"""A GUI heartbeat for the stall benchmarks: a timer every ``interval_ms`` on the GUI thread;
the longest gap between two beats, less the interval, is the longest the GUI was held."""

from __future__ import annotations

import time


class Heartbeat:
    def __init__(self, interval_ms: int = 16) -> None:
        from PySide6.QtCore import QTimer

        self.interval_ms = interval_ms
        self.gaps: list[float] = []
        self._last = time.perf_counter()
        self._timer = QTimer()
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._beat)

    def _beat(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self._last)
        self._last = now

    def start(self) -> None:
        self.gaps.clear()
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def stall_ms(self) -> float:
        if not self.gaps:
            return 0.0
        return max(0.0, (max(self.gaps) - self.interval_ms / 1000) * 1000)
