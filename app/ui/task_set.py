"""Coroutines a widget starts and owns: kept referenced until they end (asyncio holds only weak
references to tasks), a failure logged and handed to the widget to show, all cancelled when the
widget goes away."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

log = logging.getLogger(__name__)


class TaskSet:
    def __init__(self, what: str, on_failure: Callable[[BaseException], None]) -> None:
        self._what = what  # for the log: "MCP resource browser", …
        self._on_failure = on_failure
        self._tasks: set[asyncio.Future[Any]] = set()

    def run(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        import asyncio

        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def cancel_all(self) -> None:
        """Cancel every task but the one calling this (a task may close its own widget)."""
        import asyncio

        for task in list(self._tasks):
            if task is not asyncio.current_task():
                task.cancel()

    def _done(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled() or task.exception() is None:
            return
        error = task.exception()
        assert error is not None
        log.error("%s failed", self._what, exc_info=error)
        try:
            self._on_failure(error)
        except RuntimeError:  # the widget is gone
            pass
