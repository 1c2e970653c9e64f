"""Stopping one foreground child (its row's Stop, or Stop all) ends that child only: its
parent gets the child's result (cancelled) and goes on, as with a background child."""

from __future__ import annotations

import asyncio

from app.core.agent.events import RunCancelled, SubAgentUpdated
from tests.fakes.anthropic_server import Response
from tests.unit.agent.helpers import Harness
from tests.unit.agent.sub_agents.test_delegation import (
    _create,
    _execute,
    _orchestrating,
    _results,
    _text,
)

CHILD_MODEL = "claude-child-stop-test"


async def test_stopping_a_foreground_child_lets_its_parent_continue(harness: Harness) -> None:
    _orchestrating(harness)
    harness.server.script(_create("slow", "c1", model=CHILD_MODEL), _execute("slow", "e1"),
                          Response.text("the parent goes on"))
    harness.server.script_for(CHILD_MODEL, Response.text("too late", delay_s=30))
    session = harness.session()
    run = asyncio.ensure_future(session.run("go"))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while not any(isinstance(e, SubAgentUpdated) and e.status == "working"
                  for e in harness.events):
        assert loop.time() < deadline, "the child never started"
        await asyncio.sleep(0.01)
    host = session.sub_agents
    assert host is not None
    host.cancel_all()
    await asyncio.wait_for(run, 10)
    assert not harness.of(RunCancelled)  # the parent was not stopped
    block = _results(harness)["e1"]
    assert block["is_error"] and "cancelled" in _text(block)
    assert harness.text().endswith("the parent goes on")
