"""Sub-agents through the panel: the rows under the call show each child; Stop stops a
background child (its slow tool is cancelled), and Open transcript shows the child's stored
conversation."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QPushButton

from app.core.orchestration_mode import Orchestration
from app.core.permissions.rules import PermissionRule
from app.core.services import default_rules
from app.core.store.profiles import ToolSetting
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
    tool,
)
from tests.ui.conftest import make_ai_panel, wait_for


async def test_rows_stop_and_transcript(  # type: ignore[no-untyped-def]
        qtbot, services, project, fake_anthropic_env) -> None:  # noqa: F811
    server = fake_anthropic_env
    profile = services.profiles.ensure_default()
    services.profiles.set_orchestration(profile.id, Orchestration.SUB_AGENTS)
    services.profiles.set_tool(profile.id, ToolSetting("shell_exec", True, {
        "program_level": "any_sandboxed"}))
    services.permissions.rules.seed_defaults(default_rules(services.registry.specs()))
    services.permissions.rules.add(PermissionRule("allow", server_id="builtin",
                                                  tool_name="shell_exec"))
    server.script(
        Response.tools(tool("create_sub_agent", {"name": "sleeper", "instructions": "Sleep.",
                                                 "model": "child", "tools": ["shell_exec"]},
                            id="c1")),
        Response.tools(tool("execute_sub_agent", {"agent_id": "sleeper", "input": "go",
                                                  "background": True}, id="e1")),
        Response.text("started it"))
    server.script_for("child", Response.tools(tool("shell_exec", {"command": "sleep 30"})))
    panel = make_ai_panel(qtbot, services, project, size=(800, 600), show=True)
    assert panel.send("delegate")
    await wait_for(lambda: not panel.running, timeout=20)
    card = panel.tool_cards.by_id["e1"]
    await wait_for(lambda: card.sub_agents is not None
                   and card.sub_agents.status_of(1) == "Working", timeout=20)
    rows = card.sub_agents
    assert rows is not None
    stop = rows.findChild(QPushButton, "sub-agent-stop")
    child = panel.session.sub_agents.child(1)

    def child_turns() -> int:  # its tool call is stored: the command runs now
        session = child._session
        cid = session.conversation_id if session is not None else None
        return len(services.conversations.messages(cid)) if cid is not None else 0

    await wait_for(lambda: child_turns() >= 2, timeout=20)
    stop.click()
    await wait_for(lambda: rows.status_of(1) == "Cancelled", timeout=10)
    assert not rows.stop_all.isEnabled()
    assert rows._events[1][0].conversation_id is not None, rows._events[1][0]
    rows.findChild(QPushButton, "sub-agent-open").click()
    await wait_for(lambda: any(w.objectName() == "sub-agent-transcript"
                               for w in QApplication.topLevelWidgets() if w.isVisible()),
                   timeout=10)
    (shown,) = [w for w in QApplication.topLevelWidgets()
                if w.objectName() == "sub-agent-transcript" and w.isVisible()]
    assert "[tool call shell_exec]" in shown.findChild(type(shown.children()[-1])).toPlainText()
    shown.close()
    await panel.shutdown()
