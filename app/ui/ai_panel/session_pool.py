"""The AI panel's conversations that run while another is shown: several run at once.

The panel shows one conversation (``SessionHolder.session``); when the person opens another,
or starts a new one, while it runs, its session and run task are *parked* here and go on. Every
session's events pass through ``route``: the run board (app.core.agent.run_board) sees them all,
the panel only those of the conversation shown; a parked one's events mark it *unseen*. Opening
a parked conversation again ``take``s its session and task back (the panel reloads its
transcript from the store and live events resume). A parked run that ends closes its session:
the store has everything a new one needs.

The board and the session module are imported by the first run: the panel is ready without
them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.ui.controllers.checkpoints import loop_running

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    from app.core.agent.events import AgentEvent, EventSink
    from app.core.agent.run_board import RunBoard, RunRow
    from app.core.agent.session import AgentSession

RowListener = Callable[["RunRow"], None]


@dataclass
class Parked:
    session: AgentSession
    task: asyncio.Task[None]


class SessionPool:
    """``parked``: the runs going on in conversations not shown; ``board``: every run's row.

    ``limit()`` is how many may run at once (the PARALLEL_RUNS setting); ``title(session)`` the
    conversation's title for the board and the approval dialog."""

    def __init__(self, limit: Callable[[], int],
                 title: Callable[[AgentSession], str]) -> None:
        self._limit = limit
        self.title = title
        self.parked: list[Parked] = []
        self.unseen: set[int] = set()
        # Told every change of a row (the status view, the notifications).
        self.listeners: list[RowListener] = []
        self._board: RunBoard | None = None
        self._keys: dict[int, str] = {}  # id(session) → its key on the board
        self._numbers = itertools.count(1)
        self._closing: set[asyncio.Future[None]] = set()

    @property
    def made_board(self) -> bool:
        """Whether a run has started yet (the board is made by the first)."""
        return self._board is not None

    @property
    def board(self) -> RunBoard:
        if self._board is None:
            from app.core.agent.run_board import RunBoard

            self._board = RunBoard(self._limit, self._row_changed)
        return self._board

    def _row_changed(self, row: RunRow) -> None:
        for listener in list(self.listeners):
            listener(row)

    # -- runs --------------------------------------------------------------------------------

    def may_start(self) -> bool:
        return self._board is None or self.board.may_start()

    def started(self, session: AgentSession, project: Path) -> None:
        """A run of ``session``'s conversation starts. Send asks ``may_start`` first; a Retry
        or a compaction over the limit still runs, off the board."""
        try:
            self.board.start(self.key_of(session), self.title(session), project)
        except RuntimeError:
            pass

    def ended(self, session: AgentSession) -> None:
        """``session``'s run task is over: a row no event ended (a compaction, a run stopped
        before it was sent) leaves the board."""
        key = self.key_of(session)
        row = self.board.rows.get(key)
        if row is not None and row.status.active:
            self.board.forget(key)
            self._row_changed(row)

    def key_of(self, session: AgentSession) -> str:
        """The conversation's id, or a placeholder until its first run has made it (the row
        is renamed then)."""
        known = self._keys.get(id(session))
        conversation_id = session.conversation_id
        if conversation_id is None:
            if known is None:
                known = self._keys[id(session)] = f"new-{next(self._numbers)}"
            return known
        key = str(conversation_id)
        if known != key:
            if known is not None and self._board is not None:
                self._board.rename(known, key, self.title(session))
            self._keys[id(session)] = key
        return key

    def route(self, session: AgentSession, shown: Callable[[AgentSession], bool],
              sink: EventSink) -> EventSink:
        """``session``'s event sink: the board first, then ``sink`` while it is shown."""
        def on_event(event: AgentEvent) -> None:
            if self._board is not None:
                self._board.observe(self.key_of(session), event)
            if shown(session):
                sink(event)
            elif session.conversation_id is not None:
                self.unseen.add(session.conversation_id)
        return on_event

    # -- parking -----------------------------------------------------------------------------

    def park(self, session: AgentSession, task: asyncio.Task[None]) -> None:
        """``session`` runs on unseen; its session is closed when its task ends."""
        entry = Parked(session, task)
        self.parked.append(entry)

        def ended(_task: asyncio.Task[None]) -> None:
            self._parked_ended(entry)
        task.add_done_callback(ended)

    def take(self, conversation_id: int) -> Parked | None:
        """The parked run of ``conversation_id`` back to the panel (None: there is none)."""
        self.unseen.discard(conversation_id)
        for entry in self.parked:
            if entry.session.conversation_id == conversation_id and not entry.task.done():
                self.parked.remove(entry)
                return entry
        return None

    def running(self, conversation_id: int) -> bool:
        return any(e.session.conversation_id == conversation_id for e in self.parked)

    def _parked_ended(self, entry: Parked) -> None:
        if entry not in self.parked:
            return  # taken back by the panel first
        self.parked.remove(entry)
        self.ended(entry.session)
        self.close(entry.session)

    def close(self, session: AgentSession) -> None:
        """Close ``session`` in the background (its client, its jobs)."""
        import asyncio

        self._keys.pop(id(session), None)
        # Without a running loop (a script, a synchronous test) nothing could run the close;
        # the session's client goes with the session.
        if loop_running():
            self._closing.add(asyncio.ensure_future(session.aclose()))
            self._closing = {t for t in self._closing if not t.done()}

    def cancel_all(self) -> None:
        for entry in self.parked:
            entry.session.cancel()

    async def aclose(self) -> None:
        """Quit: every parked run is stopped and its session closed."""
        import asyncio

        parked, self.parked = self.parked, []
        for entry in parked:
            await entry.session.aclose()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
