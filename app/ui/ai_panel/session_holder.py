"""The AI panel's agent session: the one of the conversation shown, made by the first Send of
a new conversation or when a stored one is opened, and closed when another takes its place.

The session module is imported by its first use (Send, or opening a conversation), or before
it, off the GUI thread, by app.startup_threads' warm-up: the panel is ready without it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.ui.controllers.checkpoints import loop_running

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    from app.core.agent.events import AgentEvent, Approver
    from app.core.agent.session import AgentSession
    from app.core.services import Services


class SessionHolder:
    """``session``: the conversation's agent session, or None before its first Send."""

    def __init__(self, services: Services, profile_id: Callable[[], int], approver: Approver,
                 on_event: Callable[[AgentEvent], None]) -> None:
        self._services = services
        self._profile_id = profile_id
        self._approver = approver
        self._on_event = on_event
        self.session: AgentSession | None = None
        self._closing: set[asyncio.Future[None]] = set()

    def ensure(self, root: Path) -> AgentSession:
        """The session, made for a new conversation in ``root`` if there is none."""
        if self.session is None:
            self.session = self._new(root)
        return self.session

    def open(self, root: Path, conversation_id: int) -> AgentSession:
        """A session on the stored conversation ``conversation_id`` (after ``discard``)."""
        self.session = self._new(root, conversation_id)
        return self.session

    def _new(self, root: Path, conversation_id: int | None = None) -> AgentSession:
        from app.core.agent.project_instructions import personal_instructions_path
        from app.core.agent.session import AgentSession

        services = self._services
        return AgentSession(
            db=services.db, registry=services.registry, permissions=services.permissions,
            profile_id=self._profile_id(), project_root=root, approver=self._approver,
            on_event=self._on_event, conversation_id=conversation_id,
            checkpointer=services.checkpointer_for(root),
            project_trusted=services.is_trusted(root),
            personal_instructions=personal_instructions_path(services.data_dir),
            data_dir=services.data_dir)

    def discard(self) -> None:
        """Forget the current session; its HTTP client is closed in the background."""
        import asyncio

        old, self.session = self.session, None
        # Without a running loop (a script, a synchronous test) nothing could run the close;
        # the session's client goes with the session.
        if old is not None and loop_running():
            self._closing.add(asyncio.ensure_future(old.aclose()))
            self._closing = {t for t in self._closing if not t.done()}

    async def aclose(self) -> None:
        """Quit: the session's HTTP client is closed."""
        if self.session is not None:
            await self.session.aclose()
