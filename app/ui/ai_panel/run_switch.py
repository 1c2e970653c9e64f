"""What the status view of parallel runs does to a run: Open (show its conversation in the
panel) and Stop (cancel it, declining its approvals), whether it is the conversation shown or
one running in the background (session_pool), and how many are going."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.agent.run_board import RunRow
    from app.ui.ai_panel.session_holder import SessionHolder
    from app.ui.approval_queue import ApprovalQueue

STOPPED_HERE = "The person stopped the run."


class RunSwitch:
    """``open_conversation(id)`` shows a stored conversation (Conversations.open);
    ``stop_shown`` is the panel's Stop."""

    def __init__(self, sessions: SessionHolder, approvals: ApprovalQueue, *,
                 open_conversation: Callable[[int], object],
                 stop_shown: Callable[[], None]) -> None:
        self._sessions = sessions
        self._approvals = approvals
        self._open_conversation = open_conversation
        self._stop_shown = stop_shown
        # A run's project as the status view names it (a run workspace says whose it is).
        self.describe_project: Callable[[Path], str] = lambda path: path.name or str(path)

    def rows(self) -> list[RunRow]:
        """The board's rows, the active first, the newest first within each."""
        pool = self._sessions.pool
        if not pool.made_board:
            return []
        rows = list(pool.board.rows.values())
        return sorted(rows, key=lambda r: (not r.status.active, -r.started))

    def active_count(self) -> int:
        return sum(1 for r in self.rows() if r.status.active)

    def shown_key(self) -> str | None:
        session = self._sessions.session
        return self._sessions.pool.key_of(session) if session is not None else None

    def open(self, key: str) -> bool:
        """Show the conversation of row ``key`` (False: it has no stored conversation yet)."""
        if key == self.shown_key():
            return True
        if not key.isdigit():
            return False
        self._open_conversation(int(key))
        return True

    def stop(self, key: str) -> None:
        """Stop the run of row ``key``: its stream and tools are cancelled, its approvals
        declined; the other runs go on."""
        if key == self.shown_key():
            self._stop_shown()
            return
        pool = self._sessions.pool
        for entry in list(pool.parked):
            if pool.key_of(entry.session) == key:
                self._decline_of(entry.session.conversation_id)
                entry.session.cancel()

    def _decline_of(self, conversation_id: int | None) -> None:
        self._approvals.abort(STOPPED_HERE, only=lambda r: r.conversation_id == conversation_id)

    def stop_all(self) -> None:
        """Closing the window: every run stops (the shown one through the panel's Stop)."""
        self._sessions.pool.cancel_all()
        self._stop_shown()
