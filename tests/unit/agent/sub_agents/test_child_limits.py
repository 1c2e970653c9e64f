"""Limits, cost and cancellation of sub-agents: Stop ends every child and its tools, a child's
tokens are its own and its parent conversation's, children wait for a free slot, and a child
over its time limit is stopped with the facts saying so."""

from __future__ import annotations

import asyncio
from typing import Any

from app.core.agent.agent_scope import AgentScope
from app.core.agent.events import EventSink, RunCancelled, SubAgentUpdated
from app.core.agent.sub_agents.child_run import ChildRun, ParentLinks
from app.core.agent.sub_agents.definitions import SubAgentDefinition
from app.core.orchestration_mode import Orchestration
from app.core.permission_mode import PermissionMode
from app.core.services import default_rules
from app.core.settings_fields import SUB_AGENTS_AT_ONCE
from app.core.store.settings import SettingsRepository
from app.core.store.usage import UsageRepository
from tests.fakes.anthropic_server import Response, tool
from tests.unit.agent.helpers import Harness
from tests.unit.agent.sub_agents.test_delegation import _create, _execute, _results, _text


def _orchestrating(harness: Harness) -> None:
    harness.update_profile(permission_mode=PermissionMode.AUTO,
                           orchestration=Orchestration.SUB_AGENTS)
    harness.permissions.rules.seed_defaults(default_rules(harness.registry.specs()))
    harness.allow("slow")
    harness.allow("record")


async def test_stop_cancels_a_background_child_and_its_running_tool(harness: Harness) -> None:
    _orchestrating(harness)
    harness.server.script(
        _create("bg", "c1", tools=["slow"], model="child-model"),
        _execute("bg", "e1", background=True), Response.text("started it"))
    harness.server.script_for("child-model", Response.tools(tool("slow", {}, id="s1")))
    session = harness.session()
    await session.run("go")  # the parent's run ends; its background child works on
    for _ in range(400):  # until the child's tool runs
        if harness.slow.started:
            break
        await asyncio.sleep(0.01)
    assert harness.slow.started and not harness.slow.cancelled
    session.cancel()  # Stop, with no run of the parent's going
    assert session.sub_agents is not None
    tasks = [c.task for c in session.sub_agents._runs.values() if c.task is not None]
    await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 3)
    assert harness.slow.cancelled
    child = next(iter(session.sub_agents._runs.values()))
    assert child.status == "cancelled"
    assert child.facts.ended == "cancelled"  # it had started: not "before it started"
    assert child.child_conversation_id is not None
    assert [e.status for e in harness.of(SubAgentUpdated)][-1] == "cancelled"


async def test_a_childs_tokens_are_its_own_and_its_parents(harness: Harness) -> None:
    _orchestrating(harness)
    harness.server.script(_create("h", "c1", model="child-model"), _execute("h", "e1"),
                          Response.text("parent done"))
    harness.server.script_for("child-model", Response.text("child answer"))
    session = harness.session()
    await session.run("go")
    assert session.conversation_id is not None
    per_model = UsageRepository(harness.db).for_conversation(session.conversation_id)
    assert "child-model" in per_model and per_model["child-model"].output_tokens > 0
    assert "child-model" in session.conversation_usage()  # live, too
    rows = harness.of(SubAgentUpdated)
    assert rows[-1].output_tokens > 0
    assert "tokens:" in _text(_results(harness)["e1"])


async def test_children_wait_for_a_free_slot(harness: Harness) -> None:
    _orchestrating(harness)
    SettingsRepository(harness.db).write(SUB_AGENTS_AT_ONCE, 1)
    harness.server.script(
        _create("a", "c1", tools=["slow"], model="model-a"),
        _create("b", "c2", model="model-b"),
        _execute("a", "e1", background=True), _execute("b", "e2", background=True),
        Response.tools(tool("get_sub_agent_result", {"execution_id": "2", "wait_s": 0.3},
                            id="g1")),
        Response.tools(tool("cancel_sub_agent", {"execution_id": "1"}, id="k1")),
        Response.tools(tool("get_sub_agent_result", {"execution_id": "2", "wait_s": 30},
                            id="g2")),
        Response.text("done"))
    harness.server.script_for("model-a", Response.tools(tool("slow", {}, id="s1")))
    harness.server.script_for("model-b", Response.text("b's answer"))
    await harness.session().run("go")
    results = _results(harness)
    assert "is working" in _text(results["g1"])  # b waited: a held the only slot
    assert "b's answer" in _text(results["g2"])
    assert harness.slow.cancelled


class _NeverEnding:
    """A child session whose run never ends until cancelled."""

    def __init__(self) -> None:
        self.cancelled = False
        self.closed = False
        self._task: asyncio.Future[None] | None = None

    @property
    def conversation_id(self) -> int | None:
        return None

    async def run(self, user_text: str) -> None:
        self._task = asyncio.get_running_loop().create_future()
        await self._task

    def cancel(self) -> None:
        self.cancelled = True
        if self._task is not None:
            self._task.cancel()

    async def aclose(self) -> None:
        self.closed = True

    def final_answer(self) -> str:
        return "all done, everything worked"


async def test_a_child_over_its_time_limit_is_stopped_and_says_so() -> None:
    events: list[Any] = []
    sink: EventSink = events.append
    child = ChildRun(execution_id=7, definition=SubAgentDefinition("slowpoke", "x"),
                     scope=AgentScope(chain=("orchestrator", "slowpoke")),
                     parent_call_id="t1", quarantined=False, summary_tokens=100,
                     time_limit_s=0.05,
                     parent=ParentLinks(sink, lambda *_a: None, lambda: None,
                                        lambda *_a: None, lambda _texts: None))
    session = _NeverEnding()
    child.on_event(RunCancelled("stopped"))
    result = await child.start(session, "work")
    assert session.cancelled and session.closed
    assert child.status == "failed"
    assert "time limit" in result and "all done" in result  # its claim, then the facts
    assert result.index("all done") < result.index("Facts Tebiki recorded")


class _Answers(_NeverEnding):
    async def run(self, user_text: str) -> None:
        return None


async def test_a_finished_childs_session_is_closed() -> None:
    child = ChildRun(execution_id=8, definition=SubAgentDefinition("quick", "x"),
                     scope=AgentScope(chain=("orchestrator", "quick")),
                     parent_call_id="t1", quarantined=False, summary_tokens=100,
                     time_limit_s=5, parent=ParentLinks(lambda _e: None, lambda *_a: None,
                                                        lambda: None, lambda *_a: None,
                                                        lambda _texts: None))
    session = _Answers()
    result = await child.start(session, "work")
    assert session.closed and not session.cancelled
    assert child.status == "done" and "finished: done" in result
