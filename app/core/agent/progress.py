"""A running call's progress as ToolProgress events, throttled.

A server may send thousands of progress notifications a second; each event repaints a card on
the GUI thread. ``ProgressReporter`` passes the first at once, then at most one per
``interval_s``: the latest value waits on a timer and replaces any it supersedes, so the bar
ends on the last value the server sent. ``close()`` (when the call finishes) sends what is
still waiting, so no progress event comes after the call's ToolFinished.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable

from app.core.agent.events import ToolProgress

PROGRESS_INTERVAL_S = 0.1
MAX_MESSAGE_CHARS = 200


class ProgressReporter:
    """``ToolContext.progress`` for one call. Created on the event loop; ``__call__`` may come
    from any thread (a tool working in a worker thread), it hops to the loop."""

    def __init__(self, tool_use_id: str, emit: Callable[[ToolProgress], None], *,
                 interval_s: float = PROGRESS_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._tool_use_id = tool_use_id
        self._emit = emit
        self._interval_s = interval_s
        self._clock = clock
        self._loop = asyncio.get_running_loop()
        self._last_sent: float | None = None
        self._waiting: ToolProgress | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False
        self.received = 0  # notifications seen, for tests and logs
        self.sent = 0

    def __call__(self, progress: float, total: float | None = None,
                 message: str | None = None) -> None:
        event = _event(self._tool_use_id, progress, total, message)
        if event is None:
            return
        try:
            on_loop = asyncio.get_running_loop() is self._loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            self._report(event)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._report, event)

    def close(self) -> None:
        """The call is over: send the value still waiting, then ignore everything."""
        if self._closed:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._flush()
        self._closed = True

    def _report(self, event: ToolProgress) -> None:
        if self._closed:
            return
        self.received += 1
        self._waiting = event
        if self._timer is not None:
            return  # the timer sends the latest value
        now = self._clock()
        due = 0.0 if self._last_sent is None else self._last_sent + self._interval_s - now
        if due <= 0:
            self._flush()
        else:
            self._timer = self._loop.call_later(due, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        if not self._closed:
            self._flush()

    def _flush(self) -> None:
        event, self._waiting = self._waiting, None
        if event is None:
            return
        self._last_sent = self._clock()
        self.sent += 1
        self._emit(event)


def _event(tool_use_id: str, progress: object, total: object,
           message: object) -> ToolProgress | None:
    """The event for a notification, or None when its numbers make no sense (a server's
    malformed notification is dropped, never shown as a broken bar)."""
    if isinstance(progress, bool) or not isinstance(progress, int | float):
        return None
    if not math.isfinite(progress) or progress < 0:
        return None
    known: float | None = None
    if (isinstance(total, int | float) and not isinstance(total, bool) and math.isfinite(total)
            and total > 0):
        known = float(total)
    text = message.strip()[:MAX_MESSAGE_CHARS] if isinstance(message, str) else None
    return ToolProgress(tool_use_id, float(progress), known, text or None)
