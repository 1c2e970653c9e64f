"""Every conversation that is running or waiting on the person, in one place: the status view
of parallel runs reads it, and it holds the limit on how many run at once.

Each AgentSession is its own conversation with its own approvals and flow labels; the board
only watches their events (``watch`` wraps a session's event sink) and keeps one row per
conversation: Working, Needs input (an approval is waiting), Done, Failed or Stopped, with its
project, elapsed time, tokens and cost. ``may_start`` says whether one more run fits under the
limit (Settings: 4 at once).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from app.core.agent.events import (
    AgentEvent,
    AwaitingApproval,
    EventSink,
    RunCancelled,
    RunFailed,
    RunFinished,
    ToolFinished,
    ToolStarted,
    UsageUpdated,
)
from app.core.pricing import cost


class RunStatus(StrEnum):
    WORKING = "working"
    NEEDS_INPUT = "needs_input"
    DONE = "done"
    FAILED = "failed"
    STOPPED = "stopped"

    @property
    def label(self) -> str:
        return {"working": "Working", "needs_input": "Needs input", "done": "Done",
                "failed": "Failed", "stopped": "Stopped"}[self.value]

    @property
    def active(self) -> bool:
        return self in (RunStatus.WORKING, RunStatus.NEEDS_INPUT)


@dataclass(frozen=True)
class RunRow:
    key: str  # the conversation's id, or a placeholder until it has one
    title: str
    project: Path
    status: RunStatus
    started: float
    finished: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    waiting: frozenset[str] = field(default_factory=frozenset)  # tool_use ids asking

    def elapsed_s(self, now: float | None = None) -> float:
        end = self.finished if self.finished is not None else (now or time.monotonic())
        return max(0.0, end - self.started)


class RunBoard:
    """The rows, by conversation key; ``changed(row)`` is told each change (the status view's
    refresh). ``limit()`` is how many may run at once."""

    def __init__(self, limit: Callable[[], int] = lambda: 4,
                 changed: Callable[[RunRow], None] = lambda _row: None) -> None:
        self._limit = limit
        self._changed = changed
        self.rows: dict[str, RunRow] = {}

    def active(self) -> list[RunRow]:
        return [r for r in self.rows.values() if r.status.active]

    def may_start(self) -> bool:
        return len(self.active()) < max(1, self._limit())

    def needing_input(self) -> list[RunRow]:
        return [r for r in self.rows.values() if r.status is RunStatus.NEEDS_INPUT]

    def start(self, key: str, title: str, project: Path) -> None:
        """A run of conversation ``key`` starts (RuntimeError over the limit)."""
        if not self.may_start() and not (key in self.rows and self.rows[key].status.active):
            raise RuntimeError(f"{self._limit()} conversations are already running; wait for "
                               "one or stop it")
        self._set(RunRow(key, title, project, RunStatus.WORKING, time.monotonic()))

    def watch(self, key: str, sink: EventSink) -> EventSink:
        """``sink`` with the board told every event of conversation ``key`` first."""
        def on_event(event: AgentEvent) -> None:
            self.observe(key, event)
            sink(event)
        return on_event

    def observe(self, key: str, event: AgentEvent) -> None:
        row = self.rows.get(key)
        if row is None:
            return
        match event:
            case AwaitingApproval():
                self._set(replace(row, status=RunStatus.NEEDS_INPUT,
                                  waiting=row.waiting | {event.request.tool_use_id}))
            case ToolStarted() | ToolFinished() if event.tool_use_id in row.waiting:
                waiting = row.waiting - {event.tool_use_id}
                self._set(replace(row, waiting=waiting, status=RunStatus.NEEDS_INPUT
                                  if waiting else RunStatus.WORKING))
            case UsageUpdated():
                self._set(replace(
                    row, input_tokens=row.input_tokens + event.turn.total_input,
                    output_tokens=row.output_tokens + event.turn.output_tokens,
                    cost_usd=row.cost_usd + (cost(event.model, event.turn,
                                                  cache_ttl=event.cache_ttl) or 0.0)))
            case RunFinished():
                self._end(row, RunStatus.DONE)
            case RunFailed():
                self._end(row, RunStatus.FAILED)
            case RunCancelled():
                self._end(row, RunStatus.STOPPED)
            case _:
                pass

    def rename(self, old: str, new: str, title: str | None = None) -> None:
        """The conversation got its id (its first run created it), and its title then."""
        row = self.rows.pop(old, None)
        if row is not None:
            self._set(replace(row, key=new, title=title or row.title))

    def forget(self, key: str) -> None:
        self.rows.pop(key, None)

    def _end(self, row: RunRow, status: RunStatus) -> None:
        self._set(replace(row, status=status, finished=time.monotonic(), waiting=frozenset()))

    def _set(self, row: RunRow) -> None:
        self.rows[row.key] = row
        self._changed(row)
