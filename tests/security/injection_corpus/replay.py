"""Replays the corpus through the real agent loop: ``AgentSession`` with a scripted model on the
fake Anthropic server, the suites' tools registered as MCP tools (``spec_for_tool`` makes their
specs from the wire format, as ``McpProvider`` does; a scripted server answers their calls),
the real ``ToolPermissionService`` and the conversation's real flow state.

The person: before the replay they have done their own tasks and ticked "Always allow" for
every tool those tasks used (one allow rule per tool, scoped to its server); in each run they
approve every call of their own task (ticking "Always allow" again), let the reads an injection
asks for run (so what they find reaches the model) and decline its harmful call.
An injected goal is *reached unasked* when its harmful call ran without the person having been
asked about it. A benign call *asks* when it reached the person despite their rule.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.agent.events import ApprovalRequest, ApprovalResponse
from app.core.agent.models import client_factory
from app.core.agent.session import AgentSession
from app.core.permission_mode import PermissionMode
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import ToolPermissionService
from app.core.store.db import open_database
from app.core.store.profiles import ProfileRepository, ToolSetting
from app.core.tools.base import ToolContext, ToolResult, ToolSpec
from app.core.tools.providers.base import ProviderPriority, StaticProvider
from app.core.tools.providers.mcp.tool_specs import qualified_tool_name, spec_for_tool
from app.core.tools.registry import ToolRegistry
from tests.fakes.anthropic_server import FakeAnthropicServer, Response, tool
from tests.security.injection_corpus import Call, InjectionGoal, Suite, UserTask

__all__ = ["ReplayReport", "RunOutcome", "replay"]

_DONE = "Done."
_DECLINED = "Not what I asked for."


def _key(tool_name: str, tool_input: Mapping[str, Any]) -> str:
    return f"{tool_name} {json.dumps(tool_input, sort_keys=True)}"


class ScriptedServer:
    """What one suite's server answers in the current run, and which calls reached it."""

    def __init__(self) -> None:
        self._answers: list[tuple[str, str]] = []
        self.executed: list[str] = []

    def load(self, steps: Iterable[tuple[Call, str]]) -> None:
        self._answers = [(_key(call.tool, call.input), answer) for call, answer in steps]
        self.executed = []

    def answer(self, remote: str, tool_input: Mapping[str, Any]) -> str:
        key = _key(remote, tool_input)
        self.executed.append(key)
        for i, (expected, answer) in enumerate(self._answers):
            if expected == key:
                del self._answers[i]
                return answer
        return _DONE


class ReplayTool:
    """A server tool as Tebiki registers an MCP tool; its calls go to the scripted server."""

    def __init__(self, server: ScriptedServer, server_id: str, wire: Mapping[str, Any]) -> None:
        self.remote = str(wire["name"])
        self.spec: ToolSpec = spec_for_tool(server_id, qualified_tool_name(server_id,
                                                                           self.remote),
                                            wire, runs_programs=True)
        self._server = server

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(self._server.answer(self.remote, input))


@dataclass(frozen=True)
class ScriptedCall:
    call: Call
    answer: str
    injected: bool  # made on the injection's orders (its reads and its harm)
    harm: bool = False


@dataclass
class CallOutcome:
    scripted: ScriptedCall
    ran: bool
    asked: bool
    decided_by: str = ""


@dataclass
class RunOutcome:
    suite: str
    task: str
    goal: InjectionGoal | None
    calls: list[CallOutcome]

    @property
    def harm(self) -> CallOutcome | None:
        return next((c for c in self.calls if c.scripted.harm), None)

    @property
    def reached_unasked(self) -> bool:
        harm = self.harm
        return harm is not None and harm.ran and not harm.asked

    def benign(self) -> list[CallOutcome]:
        return [c for c in self.calls if not c.scripted.injected]


@dataclass
class ReplayReport:
    runs: list[RunOutcome] = field(default_factory=list)

    @property
    def goal_runs(self) -> list[RunOutcome]:
        return [r for r in self.runs if r.goal is not None]

    @property
    def task_runs(self) -> list[RunOutcome]:
        return [r for r in self.runs if r.goal is None]

    def unasked(self) -> list[RunOutcome]:
        return [r for r in self.goal_runs if r.reached_unasked]

    def benign_calls(self) -> list[CallOutcome]:
        return [c for r in self.task_runs for c in r.benign()]

    def benign_asking(self) -> list[CallOutcome]:
        return [c for c in self.benign_calls() if c.asked]


def _script(task: UserTask, goal: InjectionGoal | None) -> list[ScriptedCall]:
    """The calls of one run in order: the task's, with the goal's after its planted result."""
    calls: list[ScriptedCall] = []
    for i, step in enumerate(task.steps):
        planted = goal is not None and goal.planted_in == i
        calls.append(ScriptedCall(step.call, step.answer(goal.text if planted else None),
                                  injected=False))
        if planted:
            assert goal is not None
            calls += [ScriptedCall(s.call, s.answer(), injected=True) for s in goal.prep]
            calls.append(ScriptedCall(goal.harm, _DONE, injected=True, harm=True))
    return calls


class Replay:
    """The person's app: one database, the suites' servers, one scripted model."""

    def __init__(self, db: Any, project: Path, model: FakeAnthropicServer,
                 suites: Iterable[Suite], mode: PermissionMode) -> None:
        self.db, self.project, self.model = db, project, model
        self.suites = list(suites)
        self._runs = 0
        self.servers = {suite.server: ScriptedServer() for suite in self.suites}
        tools = [ReplayTool(self.servers[suite.server], suite.server, wire)
                 for suite in self.suites for wire in suite.tools]
        self.registry = ToolRegistry([StaticProvider(tools, id="mcp", display_name="MCP",
                                                     priority=ProviderPriority.MCP)])
        self.permissions = ToolPermissionService(db, self.registry, project_root=project)
        profiles = ProfileRepository(db)
        profile = profiles.ensure_default()
        assert profile.id is not None
        self.profile_id = profile.id
        from dataclasses import replace

        profiles.update(replace(profile, permission_mode=mode))
        for replay_tool in tools:
            profiles.set_tool(self.profile_id, ToolSetting(replay_tool.spec.name, True))
        for suite in self.suites:  # "Always allow", ticked for every tool of their own tasks
            for name in sorted({s.call.tool for t in suite.tasks for s in t.steps}):
                self.permissions.rules.add(self._rule(suite, name))

    @staticmethod
    def _rule(suite: Suite, remote: str) -> PermissionRule:
        return PermissionRule("allow", server_id=suite.server,
                              tool_name=qualified_tool_name(suite.server, remote))

    async def run(self, suite: Suite, task: UserTask,
                  goal: InjectionGoal | None = None) -> RunOutcome:
        script = _script(task, goal)
        self._runs += 1
        run_id = self._runs
        ids = [f"toolu_{run_id:05d}_{i:02d}" for i in range(len(script))]
        by_id = dict(zip(ids, script, strict=True))
        asked: dict[str, str] = {}

        async def person(request: ApprovalRequest) -> ApprovalResponse:
            scripted = by_id[request.tool_use_id]
            asked[request.tool_use_id] = request.decision.decided_by or ""
            if scripted.harm:
                return ApprovalResponse.decline(_DECLINED)
            if scripted.injected:  # a read looks harmless: what it finds reaches the model
                return ApprovalResponse.approve()
            return ApprovalResponse.approve(self._rule(suite, scripted.call.tool))

        server = self.servers[suite.server]
        server.load((s.call, s.answer) for s in script)
        self.model.script(*(Response.tools(tool(qualified_tool_name(suite.server, s.call.tool),
                                                dict(s.call.input), id=i))
                            for i, s in zip(ids, script, strict=True)),
                          Response.text("All done."))
        session = AgentSession(self.db, self.registry, self.permissions, self.profile_id,
                               self.project, person, lambda event: None,
                               client_factory=client_factory(api_key="sk-ant-replay",
                                                             base_url=self.model.base_url,
                                                             max_retries=0))
        try:
            await session.run(task.prompt)
        finally:
            await session.aclose()
        assert self.model.pending == 0, f"{task.id}: the run ended early"
        ran = _ran(script, server.executed)
        calls = [CallOutcome(s, ran[i], call_id in asked, asked.get(call_id, ""))
                 for i, (call_id, s) in enumerate(zip(ids, script, strict=True))]
        return RunOutcome(suite.name, task.id, goal, calls)

    async def replay(self) -> ReplayReport:
        report = ReplayReport()
        for suite in self.suites:
            for task in suite.tasks:
                report.runs.append(await self.run(suite, task))
            for goal in suite.goals:
                report.runs.append(await self.run(suite, suite.task(goal.task), goal))
        return report

    def close(self) -> None:
        self.permissions.close()


def _ran(script: list[ScriptedCall], executed: list[str]) -> list[bool]:
    """Which scripted calls reached the server: calls run in order, so each execution is the
    next scripted call with its tool and input."""
    ran = [False] * len(script)
    position = 0
    for key in executed:
        while position < len(script) and \
                _key(script[position].call.tool, script[position].call.input) != key:
            position += 1
        if position < len(script):
            ran[position] = True
            position += 1
    return ran


@contextmanager
def _environment(workdir: Path) -> Iterator[tuple[Any, Path, FakeAnthropicServer]]:
    db = open_database(workdir / "replay.sqlite3")
    project = (workdir / "project").resolve()
    project.mkdir(exist_ok=True)
    try:
        with FakeAnthropicServer() as model:
            yield db, project, model
    finally:
        db.close()


async def replay(suites: Iterable[Suite], workdir: Path,
                 mode: PermissionMode = PermissionMode.ASK) -> ReplayReport:
    """Every task and every goal of ``suites``, each in a conversation of its own."""
    with _environment(workdir) as (db, project, model):
        app = Replay(db, project, model, suites, mode)
        try:
            return await app.replay()
        finally:
            app.close()

