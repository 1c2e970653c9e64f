"""The AI panel's run: one task at a time on the qasync loop — a Send, a Retry, an edit's
resend, Regenerate or a compaction — and whether one is going. It is the run of the
conversation shown: one left while it runs is ``detach``ed (it goes on in the background) and
``adopt``ed when shown again."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop


class RunTask:
    """``start`` a run; ``running`` until its task has ended and the panel has settled.

    ``starting`` is called before the task is made (a new run supersedes what the last one
    left), ``ended`` with the finished task (its failure, its last text), then
    ``running_changed`` on either side of the run."""

    def __init__(self, *, starting: Callable[[], None],
                 ended: Callable[[asyncio.Task[None]], None],
                 running_changed: Callable[[bool], None]) -> None:
        self._starting = starting
        self._ended = ended
        self._running_changed = running_changed
        self._running = False
        self.task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._running

    def start(self, run: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        import asyncio

        self._starting()
        task = self.task = asyncio.ensure_future(run)
        task.add_done_callback(self._on_done)
        self._set_running(True)
        return task

    def detach(self) -> asyncio.Task[None] | None:
        """The run goes on without the panel (another conversation is shown): its task, now
        no longer the panel's, or None when none is going."""
        task = self.task
        if task is None or task.done():
            return None
        task.remove_done_callback(self._on_done)
        self.task = None
        self._set_running(False)
        return task

    def adopt(self, task: asyncio.Task[None]) -> None:
        """A detached run's conversation is shown again: its task is the panel's run."""
        if task.done():
            return
        self.task = task
        task.add_done_callback(self._on_done)
        self._set_running(True)

    def _on_done(self, task: asyncio.Task[None]) -> None:
        self._ended(task)
        self._set_running(False)

    def _set_running(self, running: bool) -> None:
        self._running = running
        self._running_changed(running)
