"""One sub-agent execution: its session run to the end (or to its time limit, or Stop), the
facts Tebiki records from its events, and the result its parent gets.

The child's events are read here, never its claims: how each call ended, the files changed,
the tokens and cost (added to the parent conversation's as they come), whether it waits for
the person. Its approvals go to the same approver as its parent's (the window's queue), so a
background child's question is shown and waits there; it is never answered for the person.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from app.core.agent.agent_scope import AgentScope
from app.core.agent.checkpointing import CallChanges
from app.core.agent.events import (
    AgentEvent,
    AwaitingApproval,
    EventSink,
    FilesChanged,
    FlowChanged,
    RunCancelled,
    RunFailed,
    RunFinished,
    SubAgentUpdated,
    ToolFinished,
    ToolStarted,
    UsageUpdated,
)
from app.core.agent.sub_agents.child_workspace import ChildPlace
from app.core.agent.sub_agents.definitions import SubAgentDefinition
from app.core.agent.sub_agents.results import RunFacts, capped, parse_structured, result_text
from app.core.permissions.flow import FlowState
from app.core.pricing import cost
from app.core.store.orchestration import ExecutionStatus

log = logging.getLogger(__name__)

# How long Stop waits for a child's tools and processes to end before it lets go.
STOP_GRACE_S = 2.0


class ChildSession(Protocol):
    """The part of an AgentSession a child run uses."""

    @property
    def conversation_id(self) -> int | None: ...
    async def run(self, user_text: str) -> None: ...
    def cancel(self) -> None: ...
    async def aclose(self) -> None: ...
    def final_answer(self) -> str: ...


# (scope, the labels it starts with, its event sink) -> a new session for the child.
NewChild = Callable[[AgentScope, FlowState, EventSink, ChildPlace | None], ChildSession]


@dataclass(frozen=True)
class ParentLinks:
    """What a child run tells its parent as it goes: its rows of the tree (``emit``), its
    tokens (``add_usage``), labels it added to the shared state (``flow_changed``), what
    its calls changed, as the change set of the parent's call that started it
    (``changes_recorded(call_id, tool_name, changes)``: its audit row and its card), and
    the project's text it takes in as its instructions (``project_text_read({name: text})``:
    the files of a project the person has not marked trusted are untrusted content)."""

    emit: EventSink
    add_usage: Callable[[str, Any, str], None]
    flow_changed: Callable[[], None]
    changes_recorded: Callable[[str, str, CallChanges], None]
    project_text_read: Callable[[Mapping[str, str]], None]


class ChildRun:
    """The execution ``execution_id`` of ``definition`` in ``scope``, started by the parent's
    call ``parent_call_id``. ``quarantined``: its answer must match the definition's
    ``result_schema`` and only that value goes back."""

    def __init__(self, *, execution_id: int, definition: SubAgentDefinition, scope: AgentScope,
                 run_id: int = 0,
                 parent_call_id: str, quarantined: bool, summary_tokens: int,
                 time_limit_s: float, parent: ParentLinks,
                 prices: Mapping[str, Any] | None = None) -> None:
        self.execution_id = execution_id
        self.run_id = run_id  # its orchestration run
        self.definition = definition
        self.scope = scope
        self.parent_call_id = parent_call_id
        self.quarantined = quarantined
        self._summary_tokens = summary_tokens
        self._time_limit_s = time_limit_s
        self._parent = parent
        self._prices = prices
        self.facts = RunFacts()
        self.status: ExecutionStatus = "working"
        self.result: str | None = None
        self.child_conversation_id: int | None = None
        self.place: ChildPlace | None = None  # its own workspace (a write-capable child's)
        self.started = time.monotonic()
        self._changes: list[CallChanges] = []
        self._awaiting: set[str] = set()
        self._session: ChildSession | None = None
        self._cancelled = False
        # ``task``: the whole execution (waiting for a slot, then running); ``_inner``: the
        # session's run once it has a slot.
        self.task: asyncio.Future[str] | None = None
        self._inner: asyncio.Task[str] | None = None

    # -- running -----------------------------------------------------------------------------

    def start(self, session: ChildSession, task_input: str) -> asyncio.Task[str]:
        """Run the session on ``task_input`` (the host calls it once the child has a slot)."""
        self._session = session
        self._inner = asyncio.ensure_future(self._run(session, task_input))
        return self._inner

    async def _run(self, session: ChildSession, task_input: str) -> str:
        self.update_row()
        run = asyncio.ensure_future(session.run(task_input))
        try:
            done, _ = await asyncio.wait({run}, timeout=self._time_limit_s)
            if not done:
                self.facts.ended = f"stopped: its time limit of {self._time_limit_s:.0f} s"
                await self._stop(session, run)
        except asyncio.CancelledError:
            self._cancelled = True
            # Stopped: the session ends and the end is recorded, however many times Stop is
            # pressed meanwhile (each press cancels this task again).
            stopping = asyncio.ensure_future(self._stop(session, run))
            while not stopping.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(stopping)
            self._finish(session)
            raise
        self._finish(session)
        # Its HTTP client, background jobs and store writer end with it.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(session.aclose(), STOP_GRACE_S)
        return self.result or ""

    async def _stop(self, session: ChildSession, run: asyncio.Future[None]) -> None:
        session.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(run), STOP_GRACE_S)
        if not run.done():
            run.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(session.aclose(), STOP_GRACE_S)

    def cancel(self) -> None:
        """Stop it (its running tool and processes end; pending approvals count as declined)."""
        self._cancelled = True
        for task in (self._inner, self.task):
            if task is not None and not task.done():
                task.cancel()

    def stop_session(self) -> None:
        """Stop the session's run only (its task records the end)."""
        self._cancelled = True
        if self._inner is not None and not self._inner.done():
            self._inner.cancel()

    def never_started(self) -> None:
        """It was stopped while it waited for a slot: nothing ran."""
        self.facts.ended = "cancelled before it started"
        self.status = "cancelled"
        self.result = result_text(self.definition.name, self.execution_id, "", self.facts)
        self.update_row()

    def _finish(self, session: ChildSession) -> None:
        self.child_conversation_id = session.conversation_id
        if self._cancelled:
            self.facts.ended = "cancelled"
            self.status = "cancelled"
        elif self.facts.ended == "working":
            self.facts.ended = "done"
        answer = ""
        try:
            answer = session.final_answer()
        except Exception:  # the facts still go back
            log.exception("could not read the sub-agent's answer")
        structured: Any = None
        schema = self.definition.result_schema
        if schema is not None and answer.strip() and self.status != "cancelled":
            structured, problem = parse_structured(answer, schema)
            if problem is not None:
                self.facts.ended = f"failed: {problem} (wrong schema)"
                answer = "" if self.quarantined else answer
        if self.status != "cancelled":
            failed = not self.facts.ended.startswith(("done", "stopped at its turn limit"))
            self.status = "failed" if failed else "done"
        if self.quarantined:
            answer = ""
        answer, _cut = capped(answer, self._summary_tokens)
        self.result = result_text(self.definition.name, self.execution_id, answer, self.facts,
                                  structured=structured, quarantined=self.quarantined)
        self.update_row()

    # -- the child's events ------------------------------------------------------------------

    def on_event(self, event: AgentEvent) -> None:
        """The child session's event sink: the facts, the parent's tree row, its usage."""
        match event:
            case ToolFinished():
                self.facts.call_finished(event.tool_use_id, event.tool_name, event.outcome,
                                         event.is_error, event.content)
                self._answered(event.tool_use_id)
            case AwaitingApproval():
                self._awaiting.add(event.request.tool_use_id)
                self.status = "needs_input"
                self.update_row()
            case ToolStarted():
                self._answered(event.tool_use_id)
            case FilesChanged():
                self._changes.append(event.changes)
                for path in event.changes.paths:
                    if path not in self.facts.files_changed:
                        self.facts.files_changed.append(path)
            case UsageUpdated():
                self.facts.input_tokens += event.turn.input_tokens + \
                    event.turn.cache_write_tokens + event.turn.cache_read_tokens
                self.facts.output_tokens += event.turn.output_tokens
                self.facts.cost_usd += cost(event.model, event.turn, self._prices,
                                            cache_ttl=event.cache_ttl) or 0.0
                self._parent.add_usage(event.model, event.turn, event.cache_ttl)
                self.update_row()
            case FlowChanged():
                self._parent.flow_changed()
            case RunFinished():
                if event.stop_reason == "max_iterations":
                    self.facts.ended = "stopped at its turn limit (its work may be unfinished)"
            case RunFailed():
                self.facts.ended = f"failed: {event.message}"
            case RunCancelled():
                if not self._cancelled and self.facts.ended == "working":
                    self.facts.ended = "cancelled"
            case _:
                pass

    def _answered(self, call_id: str) -> None:
        if call_id in self._awaiting:
            self._awaiting.discard(call_id)
            if not self._awaiting and self.status == "needs_input":
                self.status = "working"
                self.update_row()

    def combined_changes(self) -> CallChanges | None:
        """Everything its calls changed, as one change set for its parent's call (so undoing
        the parent's message undoes the child's changes too)."""
        if not self._changes:
            return None
        first, last = self._changes[0], self._changes[-1]
        by_path = {c.path: c for changes in self._changes for c in changes.changes}
        return CallChanges(self.parent_call_id, first.before, last.after,
                           tuple(by_path.values()))

    def update_row(self) -> None:
        self._parent.emit(SubAgentUpdated(
            execution_id=self.execution_id, parent_call_id=self.parent_call_id,
            name=self.definition.name, chain=self.scope.agent_label, status=self.status,
            elapsed_s=time.monotonic() - self.started,
            input_tokens=self.facts.input_tokens, output_tokens=self.facts.output_tokens,
            cost_usd=self.facts.cost_usd, conversation_id=self.child_conversation_id,
            run_id=self.run_id,
            workspace_branch=self.place.workspace.branch if self.place is not None else ""))
