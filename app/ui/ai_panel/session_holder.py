"""The AI panel's agent session: the one of the conversation shown, made by the first Send of
a new conversation or when a stored one is opened, and closed when another takes its place —
unless it runs: then it goes on in the background (session_pool) until it is shown again.

The session module is imported by its first use (Send, or opening a conversation), or before
it, off the GUI thread, by app.startup_threads' warm-up: the panel is ready without it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.ui.ai_panel.session_pool import SessionPool
from app.ui.controllers.checkpoints import loop_running

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    from app.core.agent.events import AgentEvent, ApprovalRequest, ApprovalResponse, Approver
    from app.core.agent.session import AgentSession
    from app.core.services import Services
    from app.ui.ai_panel.run_task import RunTask
    from app.ui.approval_queue import ApprovalQueue


def asking_conversation(approvals: ApprovalQueue, shown: AgentSession | None) -> int | None:
    """The conversation whose approval is being answered (it may run in the background), else
    the one shown: where "remember in this conversation only" keeps its rules."""
    request = approvals.answering
    if request is not None and request.conversation_id is not None:
        return request.conversation_id
    return shown.conversation_id if shown is not None else None


class SessionHolder:
    AT_LIMIT = ("As many conversations as Settings allow are running at once; wait for one or "
                "stop it (Run → Runs), then send again.")

    """``session``: the conversation's agent session, or None before its first Send."""

    def __init__(self, services: Services, profile_id: Callable[[], int], approver: Approver,
                 on_event: Callable[[AgentEvent], None], runs: RunTask | None = None) -> None:
        """``runs``: the panel's run task, whose run goes to the background with a session
        that is no longer shown (without it, that session is closed, its run stopped)."""
        from app.core.settings_fields import PARALLEL_RUNS

        self._services = services
        self._profile_id = profile_id
        self._approver = approver
        self._on_event = on_event
        self._runs = runs
        self._session: AgentSession | None = None
        # Called whenever the shown session changes (another conversation, a new one, none).
        self.shown_listeners: list[Callable[[], None]] = []
        self._closing: set[asyncio.Future[None]] = set()
        self.pool = SessionPool(lambda: services.settings.read(PARALLEL_RUNS), self.title)
        self._start_when_made: Path | None = None  # a run started before its session exists
        # Conversations that run in a workspace (app.ui.worktree_runs): id → (its folder, the
        # object stores it may read); a session made for one works there, not in the project.
        self.workspaces: dict[int, tuple[Path, tuple[Path, ...]]] = {}

    @property
    def session(self) -> AgentSession | None:
        return self._session

    @session.setter
    def session(self, session: AgentSession | None) -> None:
        changed = session is not self._session
        self._session = session
        if changed:
            for listener in list(self.shown_listeners):
                listener()

    def ensure(self, root: Path) -> AgentSession:
        """The session, made for a new conversation in ``root`` if there is none."""
        if self.session is None:
            self.session = self._new(root)
            if self._start_when_made is not None:
                self.pool.started(self.session, self._start_when_made)
                self._start_when_made = None
        return self.session

    def open(self, root: Path, conversation_id: int) -> AgentSession:
        """A session on the stored conversation ``conversation_id`` (after ``discard``): the
        one still running in the background, if it does."""
        parked = self.pool.take(conversation_id)
        if parked is not None:
            self.session = parked.session
            if self._runs is not None:
                self._runs.adopt(parked.task)
            return self.session
        root, borrowed = self.workspaces.get(conversation_id, (root, ()))
        self.session = self._new(root, conversation_id, borrowed)
        return self.session

    def begin_in(self, root: Path, borrowed: tuple[Path, ...]) -> AgentSession:
        """A new conversation working in ``root`` (a run workspace, after ``discard``)."""
        self.session = self._new(root, borrowed=borrowed)
        return self.session

    def title(self, session: AgentSession) -> str:
        """The conversation's title (one row by its key: cheap on the GUI thread)."""
        from app.ui.widgets.conversation_rows import conversation_title

        if session.conversation_id is None:
            return "New conversation"
        try:
            return conversation_title(self._services.conversations.get(session.conversation_id))
        except KeyError:
            return "New conversation"

    # -- the runs ----------------------------------------------------------------------------

    def may_start(self) -> bool:
        """Whether one more conversation may run now (the limit of runs at once)."""
        return self.pool.may_start()

    def started(self, root: Path | None) -> None:
        """The shown conversation's run starts: its row on the board."""
        if self.session is not None:
            self.pool.started(self.session, self.session.project_root)  # a workspace: its own
        elif root is not None:
            self._start_when_made = root

    def ended(self) -> None:
        self._start_when_made = None
        if self.session is not None:
            self.pool.ended(self.session)

    def running_in_background(self, conversation_id: int) -> bool:
        return self.pool.running(conversation_id)

    async def _ask(self, session: AgentSession, request: ApprovalRequest) -> ApprovalResponse:
        """The approver of ``session``: the request names its conversation."""
        from dataclasses import replace

        named = replace(request, conversation_id=session.conversation_id,
                        conversation_title=self.title(session))
        return await self._approver(named)

    def _new(self, root: Path, conversation_id: int | None = None,
             borrowed: tuple[Path, ...] = ()) -> AgentSession:
        from app.core.agent.project_instructions import personal_instructions_path
        from app.core.agent.session import AgentSession

        services = self._services
        session = AgentSession(
            db=services.db, registry=services.registry, permissions=services.permissions,
            profile_id=self._profile_id(), project_root=root, approver=self._approver,
            on_event=self._on_event, conversation_id=conversation_id,
            checkpointer=services.checkpointer_for(root),
            project_trusted=services.is_trusted(root),
            personal_instructions=personal_instructions_path(services.data_dir),
            data_dir=services.data_dir, borrowed=borrowed)
        session.approver = lambda request: self._ask(session, request)
        # Looked up when an event comes: a test or a benchmark may wrap the panel's sink.
        session.on_event = self.pool.route(session, lambda s: s is self.session,
                                           lambda event: self._on_event(event))
        return session

    def discard(self) -> None:
        """Forget the current session; its HTTP client is closed in the background. A running
        one goes on in the background (``pool``)."""
        import asyncio

        old, self.session = self.session, None
        task = self._runs.detach() if self._runs is not None and old is not None else None
        if old is not None and task is not None:
            self.pool.park(old, task)
            return
        # Without a running loop (a script, a synchronous test) nothing could run the close;
        # the session's client goes with the session.
        if old is not None and loop_running():
            self._closing.add(asyncio.ensure_future(old.aclose()))
            self._closing = {t for t in self._closing if not t.done()}

    async def aclose(self) -> None:
        """Quit: the session's HTTP client is closed, and those running in the background."""
        if self.session is not None:
            await self.session.aclose()
        await self.pool.aclose()
