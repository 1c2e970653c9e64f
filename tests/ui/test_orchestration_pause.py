"""Orchestration in approval mode through the panel: the run pauses before the sub-agent runs,
a bar asks the person; after a "restart" (a new panel on the same store) the bar is back, Run it
runs the child and the parent continues with its result."""

from __future__ import annotations

from app.core.orchestration_mode import Orchestration
from app.core.services import default_rules
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
    tool,
)
from tests.ui.conftest import make_ai_panel, wait_for


def _bars(panel):  # type: ignore[no-untyped-def]
    return [w for w in panel.transcript.items() if w.objectName() == "orchestration-pause"]


async def test_pause_then_run_it_after_a_restart(  # type: ignore[no-untyped-def]
        qtbot, services, project, fake_anthropic_env) -> None:  # noqa: F811
    server = fake_anthropic_env
    profile = services.profiles.ensure_default()
    services.profiles.set_orchestration(profile.id, Orchestration.APPROVAL)
    services.permissions.rules.seed_defaults(default_rules(services.registry.specs()))
    server.script(
        Response.tools(tool("create_sub_agent", {"name": "helper", "instructions": "Help."},
                            id="c1")),
        Response.tools(tool("execute_sub_agent", {"agent_id": "helper", "input": "the task"},
                            id="e1")))
    panel = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    assert panel.send("delegate it")
    await wait_for(lambda: not panel.running, timeout=20)
    (bar,) = _bars(panel)
    assert "helper" in bar.label.text()
    assert len(server.message_requests) == 2  # paused: the child has not run
    conversation_id = panel.session.conversation_id
    await panel.shutdown()

    reopened = make_ai_panel(qtbot, services, project, size=(700, 500), show=True)
    reopened.conversations.open(conversation_id)
    await wait_for(lambda: bool(_bars(reopened)), timeout=10)
    (bar,) = _bars(reopened)
    server.script(Response.text("the child's answer"), Response.text("all done"))
    bar.run_button.click()
    await wait_for(lambda: len(server.message_requests) == 4 and not reopened.running,
                   timeout=20)
    last = server.last_request.messages
    results = [b for m in last if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result" and b["tool_use_id"] == "e1"]
    assert "the child's answer" in str(results[0]["content"])
    assert not bar.run_button.isEnabled()
    await reopened.shutdown()
