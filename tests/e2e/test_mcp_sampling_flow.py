"""A server's sampling request through the real window: the model calls an MCP tool, the
server asks the client's model, the person approves that request in the sampling dialog, the
model's answer goes back to the server, and the history records the request."""

from __future__ import annotations

import sys
from pathlib import Path

from app.core.store.profiles import ToolSetting
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from tests.fakes.anthropic_server import Response
from tests.ui.conftest import wait_for

HUMAN_LOOP = Path(__file__).parents[1] / "mcp_servers" / "human_loop_server.py"


async def _start(window) -> None:
    services = window.services
    configs = parse_mcp_config({"mcpServers": {"loop": {
        "command": sys.executable, "args": [str(HUMAN_LOOP)]}}}).servers
    await services.mcp.apply_config(configs)
    await wait_for(lambda: services.registry.get("loop__ask_model") is not None, timeout=30)
    services.profiles.set_tool(window.profile_id, ToolSetting("loop__ask_model", True, {}))


async def test_sampling_asks_the_person_and_is_recorded(window, fake_anthropic):
    await _start(window)
    fake_anthropic.script(
        Response.tool_use("loop__ask_model", {"prompt": "What is two plus two?"}),
        Response.text("Four."),          # the sampling request's answer
        Response.text("The server says four."))
    assert window.ai_panel.send("ask the server's helper")
    await wait_for(lambda: window.approvals.current_dialog is not None, timeout=30)
    window.approvals.current_dialog.approve_button.click()  # the tool call itself

    await wait_for(lambda: window.server_requests.current_dialog is not None, timeout=30)
    dialog = window.server_requests.current_dialog
    dialog.approve_button.click()
    await wait_for(lambda: not window.ai_panel.running, timeout=30)

    sampling_request = fake_anthropic.requests[1].body
    assert "What is two plus two?" in str(sampling_request["messages"])
    assert not sampling_request.get("tools")  # sampling never offers tools
    result = fake_anthropic.last_request.tool_results()[0]
    assert not result.get("is_error") and "Four." in str(result["content"])
    rows = [r for r in window.services.audit.list() if r.tool_name == "sampling/createMessage"]
    assert len(rows) == 1
    assert rows[0].server_id == "loop" and rows[0].decision == "ask"
    assert "Four." in (rows[0].output or "")


async def test_declined_sampling_returns_an_error_to_the_server(window, fake_anthropic):
    await _start(window)
    fake_anthropic.script(
        Response.tool_use("loop__ask_model", {"prompt": "Tell me a secret"}),
        Response.text("done"))
    assert window.ai_panel.send("ask the server's helper")
    await wait_for(lambda: window.approvals.current_dialog is not None, timeout=30)
    window.approvals.current_dialog.approve_button.click()
    await wait_for(lambda: window.server_requests.current_dialog is not None, timeout=30)
    window.server_requests.current_dialog.decline_button.click()
    await wait_for(lambda: not window.ai_panel.running, timeout=30)

    assert len(fake_anthropic.requests) == 2  # no sampling request reached the model
    rows = [r for r in window.services.audit.list() if r.tool_name == "sampling/createMessage"]
    assert len(rows) == 1 and rows[0].outcome != "executed"
