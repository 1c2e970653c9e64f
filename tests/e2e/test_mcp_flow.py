"""The UI flow with a tool from a real MCP server (stdio subprocess written with the SDK)."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QLabel

from app.core.store.profiles import ToolSetting
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from tests.fakes.anthropic_server import Response
from tests.mcp_servers import demo_server_entry
from tests.ui.conftest import wait_for


async def _start_demo(window) -> None:
    services = window.services
    configs = parse_mcp_config({"mcpServers": {"demo": demo_server_entry()}}).servers
    await services.mcp.apply_config(configs)
    await wait_for(lambda: services.registry.get("demo__echo") is not None, timeout=30)
    for name in ("demo__echo", "demo__slow"):
        services.profiles.set_tool(window.profile_id, ToolSetting(name, True, {}))


async def test_mcp_tool_needs_approval_showing_its_server(window, fake_anthropic):
    await _start_demo(window)
    assert window.tools_panel.item("demo__echo") is not None  # listed under its server
    fake_anthropic.script(Response.tool_use("demo__echo", {"text": "hello from mcp"}),
                          Response.text("echoed"))
    assert window.ai_panel.send("echo something")
    await wait_for(lambda: window.approvals.current_dialog is not None)
    dialog = window.approvals.current_dialog
    assert dialog.request.server_id == "demo"
    labels = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert "server: demo" in labels
    dialog.approve_button.click()
    await wait_for(lambda: not window.ai_panel.running, timeout=30)
    result = fake_anthropic.last_request.tool_results()[0]
    assert not result.get("is_error")
    assert "hello from mcp" in str(result["content"])
    audit = window.services.audit.list()[0]
    assert (audit.tool_name, audit.server_id, audit.outcome) == ("demo__echo", "demo",
                                                                 "executed")

    # Reloaded from the database, the card still names the tool's server.
    from app.ui.widgets.tool_card import ToolCard

    window.ai_panel.conversations.open(window.ai_panel.session.conversation_id)
    cards = [w for w in window.ai_panel.transcript.items() if isinstance(w, ToolCard)]
    assert cards and "demo" in [label.text() for label in cards[0].findChildren(QLabel)]


async def test_stop_cancels_a_slow_mcp_call(window, fake_anthropic):
    from app.core.permissions.rules import PermissionRule

    await _start_demo(window)
    window.services.permissions.rules.add(PermissionRule(
        decision="allow", server_id="demo", tool_name="demo__slow", priority=5))
    fake_anthropic.script(Response.tool_use("demo__slow", {"seconds": 30}),
                          Response.text("never"))
    assert window.ai_panel.send("wait")
    await wait_for(lambda: any(getattr(w, "status", "") == "running"
                               for w in window.ai_panel.transcript.items()), timeout=30)
    started = time.monotonic()
    window.ai_panel.stop_button.click()
    await wait_for(lambda: not window.ai_panel.running, timeout=10)
    assert time.monotonic() - started < 3
    outcomes = [e.outcome for e in window.services.audit.list()]
    assert outcomes[0] == "cancelled"
