"""What the AI panel's parts ask of each other: small protocols, so that no part names the
panel, or another part's class, as a type (and no import cycle can form through them)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    from app.core.agent.session import AgentSession
    from app.ui.widgets.tool_card import ToolCard
    from app.ui.widgets.transcript_view import RunFooter

# A line for the window's status bar (the panel's ``status_message`` signal).
Status = Callable[[str], None]


class SessionSource(Protocol):
    """The open conversation's agent session (None before the first Send of a new one)."""

    @property
    def session(self) -> AgentSession | None: ...


class RunState(Protocol):
    @property
    def running(self) -> bool:
        """True from Send until the run's task has ended and the panel has settled."""
        ...


class SessionSwitch(SessionSource, Protocol):
    def open(self, root: Path, conversation_id: int) -> AgentSession:
        """A session on the stored conversation ``conversation_id`` (after ``discard``)."""
        ...

    def discard(self) -> None:
        """No session: the next Send starts a new conversation."""
        ...

    def running_in_background(self, conversation_id: int) -> bool:
        """Whether ``conversation_id`` runs, not shown (session_pool)."""
        ...


class RunStarter(RunState, Protocol):
    def start(self, run: Coroutine[Any, Any, None]) -> asyncio.Future[None]:
        """Run ``run`` as the panel's run (Send, Stop and the running state follow it)."""
        ...


class ReplayedCards(Protocol):
    """The undo side of cards and footers built from the store."""

    def adopt(self, cards: dict[str, ToolCard], footers: list[RunFooter]) -> None: ...

    def after_restore(self) -> None: ...


NOT_WHILE_RUNNING = "Stop or wait for the run to finish first."


def idle_session(sessions: SessionSource, runs: RunState, status: Status
                 ) -> AgentSession | None:
    """The session an edit, Regenerate or Compact may change now, or None (with a status
    message) while a run goes or before there is one."""
    if runs.running:
        status(NOT_WHILE_RUNNING)
        return None
    if sessions.session is None:
        status("Open a project folder first.")
        return None
    return sessions.session
