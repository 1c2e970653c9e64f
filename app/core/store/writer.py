"""Database writes off the event loop, in order.

The agent loop runs on the GUI thread (qasync). A single SQLite commit is usually well under a
millisecond, but a WAL checkpoint's fsync on a slow disk is not; so message and audit writes go
to one worker thread, which keeps them in submission order. ``flush()`` waits for everything
submitted so far (the session flushes at the end of each run).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

log = logging.getLogger(__name__)


class BackgroundWriter:
    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tebiki-db-writer")
        self._closed = False

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future[Any]:
        if self._closed:  # after shutdown, write in place rather than lose it
            future: Future[Any] = Future()
            try:
                future.set_result(fn(*args, **kwargs))
            except Exception as exc:
                log.exception("database write failed")
                future.set_exception(exc)
            return future
        future = self._executor.submit(fn, *args, **kwargs)
        future.add_done_callback(_log_failure)
        return future

    async def flush(self) -> None:
        if not self._closed:
            await asyncio.wrap_future(self._executor.submit(lambda: None))

    def close(self) -> None:
        """Finish every pending write, then stop the thread."""
        if not self._closed:
            self._closed = True
            self._executor.shutdown(wait=True)


def _log_failure(future: Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("database write failed", exc_info=future.exception())
