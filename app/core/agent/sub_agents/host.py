"""A conversation's sub-agents: what its sub-agent tools (app.core.tools.builtin.sub_agents)
ask for, checked, limited and run.

Scope is an intersection, by construction: a child's tools are those it asks for that its
parent was offered in this run *and* is offered now; its mode is the stricter of the parent's
and the one it asks for; its session shares the parent's permission service (rules, deny
rules, sandbox, sensitive paths), reviewers, checkpoints and approver; its tool session has no
host, so it cannot start children (app.core.agent.agent_scope).

Flow crosses the boundary: a child starts with its parent's labels (the delegation message can
carry what the parent read) and, sharing the parent's label state, adds its own to it as it
goes. A quarantined child (a result schema of a few bits, within the conversation's budget:
app.core.agent.sub_agents.results) has a state of its own that starts from the parent's; the
secrets and outside files it reads never flow back, the untrusted content it reads does (its
bits may be that content's choice: a port, an amount). Any child's answer is model-written
text: what it names is never vouched for (app.core.agent.flow_tracking).

Limits (Settings): children at once (others wait for a slot), children per conversation, turns
and time per child, the summary's length. Stop cancels every child; a child's processes end
with its session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.agent.agent_scope import AgentScope
from app.core.agent.events import SubAgentUpdated
from app.core.agent.sub_agents.child_run import ChildRun, ChildSession, NewChild, ParentLinks
from app.core.agent.sub_agents.child_workspace import ChildWorkspaces
from app.core.agent.sub_agents.definitions import (
    DefinitionError,
    SubAgentDefinition,
    checked_name,
    child_system_prompt,
    load_definitions,
)
from app.core.agent.sub_agents.results import QuarantineBudget, is_quarantine_schema, schema_problem
from app.core.agent.sub_agents.run_context import build_run_context
from app.core.permission_mode import PermissionMode
from app.core.permissions.flow import FlowState
from app.core.store.orchestration import Execution, OrchestrationRepository, RunMode
from app.core.tools.base import ToolContext, ToolResult
from app.core.tools.builtin.sub_agents import (
    TOOL_NAMES,
    CancelParams,
    CreateParams,
    ExecuteParams,
    ResultParams,
)

if TYPE_CHECKING:  # only annotations name the store
    pass

log = logging.getLogger(__name__)

PAUSED = ("Sub-agent {name!r} (execution {id}) waits for the person's approval before it "
          "starts. This run pauses here; when the person approves, it runs and its result "
          "replaces this message. Do not call more tools now: end your turn with a short note "
          "of what you are waiting for.")


@dataclass(frozen=True)
class SubAgentLimits:
    at_once: int = 4
    per_conversation: int = 50
    max_turns: int = 25
    time_limit_s: float = 600.0
    summary_tokens: int = 2000


@dataclass(frozen=True)
class Offer:
    """What the parent agent has: its tools (the sub-agent tools left out) and its mode."""

    tools: frozenset[str]
    mode: PermissionMode


class SubAgentHost:
    """The sub-agents of the conversation ``conversation_id()`` whose agent runs in
    ``scope``. ``offer()`` reads what the parent has now (its profile as its scope narrows
    it); ``new_child`` builds a child session; ``links`` tell the parent what children do."""

    def __init__(self, *, repo: OrchestrationRepository, limits: Callable[[], SubAgentLimits],
                 conversation_id: Callable[[], int | None], scope: AgentScope,
                 offer: Callable[[], Offer], run_mode: Callable[[], RunMode],
                 new_child: NewChild, flow: Callable[[], FlowState], links: ParentLinks,
                 project_root: Path, data_dir: Path | None,
                 workspaces: ChildWorkspaces | None = None) -> None:
        self._repo = repo
        self._limits = limits
        self._conversation_id = conversation_id
        self._scope = scope
        self._offer = offer
        self._run_mode = run_mode
        self._new_child = new_child
        self._flow = flow
        self._links = links
        self._project_root = project_root
        self._data_dir = data_dir
        self._workspaces = workspaces  # a write-capable child's own workspace
        self._defined: dict[str, SubAgentDefinition] = {}
        self._runs: dict[int, ChildRun] = {}
        self._slots: asyncio.Semaphore | None = None
        self._run_offer: frozenset[str] | None = None  # what this run of the parent offers
        self._run_id: int | None = None
        self._resumed: int | None = None  # the run the next parent run continues
        self._requested_mode: RunMode | None = None  # orchestrate_agent's, for this run
        self._pause = False
        # What the quarantined answers of this conversation's children may carry, together:
        # pieces of one secret are that secret.
        self._quarantine = QuarantineBudget()

    # -- the parent's run --------------------------------------------------------------------

    def run_started(self, offered: Iterable[str]) -> None:
        """The parent's run starts offering ``offered``: its children get at most those."""
        self._run_offer = frozenset(offered) - TOOL_NAMES
        self._run_id, self._resumed = self._resumed, None
        self._pause = False

    def request_mode(self, mode: RunMode | None) -> None:
        """The mode of the orchestration run the next parent run starts (None: the
        profile's choice)."""
        self._requested_mode = mode

    @property
    def run_id(self) -> int | None:
        """The orchestration run of the parent's current run, once a child was started."""
        return self._run_id

    def take_pause(self) -> bool:
        paused, self._pause = self._pause, False
        return paused

    def _parent_offer(self) -> Offer:
        now = self._offer()
        tools = now.tools - TOOL_NAMES
        if self._run_offer is not None:
            tools &= self._run_offer
        return Offer(tools, now.mode)

    # -- the tools ---------------------------------------------------------------------------

    async def create(self, params: CreateParams, ctx: ToolContext) -> ToolResult:
        try:
            name = checked_name(params.name)
        except DefinitionError as exc:
            return ToolResult.error(str(exc))
        offer = self._parent_offer()
        asked = tuple(dict.fromkeys(params.tools or ()))
        problem = _tool_problem(asked, offer.tools)
        if problem is None and params.result_schema is not None:
            problem = schema_problem(params.result_schema)
        if problem is not None:
            return ToolResult.error(f"Sub-agent {name!r} was not defined: {problem}")
        mode = PermissionMode(params.mode) if params.mode else None
        definition = SubAgentDefinition(
            name=name, instructions=params.instructions, tools=asked, model=params.model,
            result_schema=params.result_schema, mode=mode)
        self._defined[name] = definition
        effective = offer.mode if mode is None else min(
            (offer.mode, mode), key=[PermissionMode.PLAN, PermissionMode.ASK,
                                     PermissionMode.AUTO].index)
        quarantined = is_quarantine_schema(params.result_schema)
        return ToolResult.ok(
            f"Defined sub-agent {name!r}: tools {', '.join(asked) or 'none'}; permission mode "
            f"{effective.value}" + ("; quarantined (only its checked JSON answer returns)"
                                    if quarantined else "") +
            f". Run it with execute_sub_agent(agent_id={name!r}, input=…).")

    async def execute(self, params: ExecuteParams, ctx: ToolContext) -> ToolResult:
        definition = self._defined.get(params.agent_id)
        if definition is None:
            files = await asyncio.to_thread(load_definitions, self._project_root,
                                            self._data_dir)
            definition = files.by_name.get(params.agent_id)
            if definition is None:
                known = sorted({*self._defined, *files.by_name}) or ["none"]
                return ToolResult.error(
                    f"Unknown sub-agent {params.agent_id!r}. Define it with create_sub_agent "
                    f"first. Known: {', '.join(known)}.")
        offer = self._parent_offer()
        if definition.source == "defined by the model":
            problem = _tool_problem(definition.tools, offer.tools)
            if problem is not None:
                return ToolResult.error(f"Sub-agent {definition.name!r} cannot run: {problem}")
        conversation_id = self._conversation_id()
        limits = self._limits()
        if conversation_id is None:
            return ToolResult.error("Sub-agents need a saved conversation.")
        started = await asyncio.to_thread(self._repo.count_for_conversation, conversation_id)
        if started >= limits.per_conversation:
            return ToolResult.error(
                f"Limit reached: this conversation has started {started} sub-agents, the "
                f"most allowed ({limits.per_conversation}, in Settings). Continue without.")
        run_id, mode = await self._current_run(conversation_id)
        execution = await asyncio.to_thread(
            self._repo.add_execution, run_id, tool_use_id=ctx.call_id,
            agent_name=definition.name, chain=" › ".join((*self._scope.chain, definition.name)),
            definition=definition.to_json(), input=params.input, background=params.background,
            status="awaiting_approval" if mode == "approval" else "working")
        if mode == "approval":
            self._pause = True
            await asyncio.to_thread(self._repo.set_run_status, run_id, "paused")
            self._links.emit(SubAgentUpdated(execution.id, ctx.call_id, definition.name,
                                             execution.chain, "awaiting_approval",
                                             run_id=run_id))
            return ToolResult.ok(PAUSED.format(name=definition.name, id=execution.id))
        child = self.start(execution, definition, offer, limits)
        if params.background:
            return ToolResult.ok(
                f"Sub-agent {definition.name!r} started in the background: execution_id "
                f"{execution.id}. Get its result with get_sub_agent_result.")
        return await self._wait(child)

    async def result(self, params: ResultParams, ctx: ToolContext) -> ToolResult:
        child = self._runs.get(_int(params.execution_id))
        if child is None:
            return ToolResult.error(f"Unknown execution_id {params.execution_id!r}.")
        if child.task is not None and not child.task.done() and params.wait_s > 0:
            await asyncio.wait({asyncio.shield(child.task)}, timeout=params.wait_s)
        if child.result is None:
            return ToolResult.ok(
                f"Sub-agent {child.definition.name!r} (execution {child.execution_id}) is "
                f"{child.status.replace('_', ' ')}: {child.facts.text()}")
        return ToolResult.ok(child.result) if child.status == "done" else \
            ToolResult.error(child.result)

    async def cancel(self, params: CancelParams, ctx: ToolContext) -> ToolResult:
        child = self._runs.get(_int(params.execution_id))
        if child is None:
            return ToolResult.error(f"Unknown execution_id {params.execution_id!r}.")
        child.cancel()
        if child.task is not None:
            await asyncio.wait({child.task})
        return ToolResult.ok(f"Sub-agent {child.definition.name!r} is {child.status}.")

    # -- running children --------------------------------------------------------------------

    def start(self, execution: Execution, definition: SubAgentDefinition, offer: Offer,
              limits: SubAgentLimits) -> ChildRun:
        """Run the child of ``execution`` (the task waits for a free slot)."""
        scope = self._scope.child(
            definition.name, parent_offered=offer.tools, tools=definition.tools,
            parent_mode=offer.mode, requested_mode=definition.mode,
            max_iterations=limits.max_turns, model=definition.model,
            instructions=child_system_prompt(definition))
        quarantined = self._quarantine.take(definition.result_schema)
        if definition.from_project:  # its instructions are the project's file: labelled
            # before a quarantined child's labels are copied from its parent's
            self._links.project_text_read({
                f"{definition.source} (sub-agent {definition.name})": definition.instructions})
        parent_flow = self._flow()
        flow = parent_flow.child_for_quarantine() if quarantined else parent_flow
        child = ChildRun(execution_id=execution.id, run_id=execution.run_id,
                         definition=definition, scope=scope,
                         parent_call_id=execution.tool_use_id, quarantined=quarantined,
                         summary_tokens=limits.summary_tokens,
                         time_limit_s=limits.time_limit_s, parent=self._links)
        self._runs[execution.id] = child
        if self._slots is None:
            self._slots = asyncio.Semaphore(limits.at_once)
        child.task = asyncio.ensure_future(self._in_slot(child, flow, execution))
        return child

    async def _in_slot(self, child: ChildRun, flow: FlowState, execution: Execution) -> str:
        assert self._slots is not None
        try:
            async with self._slots:
                await asyncio.to_thread(self._repo.started, execution.id, None)
                if self._workspaces is not None:  # its row shows while its workspace is made
                    child.update_row()
                    child.place = await self._workspaces.prepare(child.scope.tools or ())
                session: ChildSession = self._new_child(child.scope, flow, child.on_event,
                                                        child.place)
                inner = child.start(session, execution.input)
                try:
                    return await asyncio.shield(inner)
                except asyncio.CancelledError:
                    # Stopped: its session stops, and what it did is recorded before this
                    # task ends (cancelling this task again would cut that short).
                    child.stop_session()
                    with contextlib.suppress(BaseException):
                        await inner
                    raise
        finally:
            await self._record(child)

    async def _record(self, child: ChildRun) -> None:
        if child.result is None:  # stopped before it had a slot
            child.never_started()
        changes = child.combined_changes()
        if child.place is not None and self._workspaces is not None:  # in its workspace
            changes = None
            with contextlib.suppress(Exception):
                note = await self._workspaces.finish(child.place, child.child_conversation_id)
                child.result = (child.result or "") + note
                child.place = child.place if note else None  # removed: nothing to review
            child.update_row()
        if changes is not None:
            self._links.changes_recorded(child.parent_call_id, "execute_sub_agent", changes)
        status = child.status if child.status in ("done", "failed", "cancelled") else "cancelled"
        try:
            await asyncio.to_thread(
                self._repo.finish, child.execution_id, status, summary=child.result or "",
                facts=child.facts.to_json(), input_tokens=child.facts.input_tokens,
                output_tokens=child.facts.output_tokens, cost_usd=child.facts.cost_usd)
            if child.child_conversation_id is not None:
                await asyncio.to_thread(self._repo.set_child_conversation, child.execution_id,
                                        child.child_conversation_id)
            await asyncio.to_thread(self._repo.settle_run, child.run_id)
        except Exception:  # the result still reaches the parent
            log.exception("could not store the sub-agent's execution")

    async def _wait(self, child: ChildRun) -> ToolResult:
        assert child.task is not None
        try:
            await asyncio.shield(child.task)
        except asyncio.CancelledError:
            parent = asyncio.current_task()
            if (parent is not None and parent.cancelling()) or not child.task.cancelled():
                child.cancel()  # the parent was stopped: so is its foreground child
                with contextlib.suppress(BaseException):
                    await child.task
                raise
            # The child alone was stopped (its row's Stop, Stop all): the parent gets its
            # result (cancelled) and goes on.
        except Exception:
            log.exception("sub-agent %s failed", child.definition.name)
        text = child.result or f"Sub-agent {child.definition.name!r} ended without a result."
        return ToolResult.ok(text) if child.status == "done" else ToolResult.error(text)

    async def _current_run(self, conversation_id: int) -> tuple[int, RunMode]:
        if self._run_id is None:
            run = await asyncio.to_thread(self._repo.create_run, conversation_id,
                                          self._requested_mode or self._run_mode())
            self._run_id = run.id
        context = await asyncio.to_thread(build_run_context, self._repo, self._run_id)
        return context.run.id, context.run.mode

    def resume(self, run_id: int) -> None:
        """The parent continues the run ``run_id`` (after its approval): children it starts
        belong to it."""
        self._resumed = run_id
        self._pause = False

    async def run_approved(self, execution: Execution) -> tuple[str, bool]:
        """Run a child the person approved (after its run paused, perhaps before a restart):
        its definition as stored, its scope from what the parent has now. (result, ok)."""
        definition = SubAgentDefinition.from_json(execution.definition)
        child = self.start(execution, definition, self._parent_offer(), self._limits())
        result = await self._wait(child)
        return result.content, not result.is_error

    def cancel_all(self) -> list[asyncio.Future[str]]:
        """Stop: cancel every running child; the tasks to await."""
        tasks = []
        for child in self._runs.values():
            if child.task is not None and not child.task.done():
                child.cancel()
                tasks.append(child.task)
        return tasks

    async def aclose(self) -> None:
        tasks = self.cancel_all()
        if tasks:
            await asyncio.wait(tasks)

    def child(self, execution_id: int) -> ChildRun | None:
        return self._runs.get(execution_id)

    def running(self) -> list[ChildRun]:
        return [c for c in self._runs.values() if c.task is not None and not c.task.done()]


def _tool_problem(asked: Iterable[str], offered: frozenset[str]) -> str | None:
    asked = list(asked)
    nested = sorted(set(asked) & TOOL_NAMES)
    if nested:
        return f"tool not allowed: {', '.join(nested)} (sub-agents cannot start sub-agents)"
    missing = sorted(set(asked) - offered)
    if missing:
        return (f"tool not allowed: {', '.join(missing)} — a sub-agent can only get tools you "
                f"have ({', '.join(sorted(offered)) or 'none'})")
    return None


def _int(value: str) -> int:
    try:
        return int(value.strip())
    except ValueError:
        return -1
