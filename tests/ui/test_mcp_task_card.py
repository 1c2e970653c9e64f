"""An MCP call the server runs as a task (revision 2026-07-28, a real server:
tests/mcp_servers/modern_server.py) shows "task <id> · <status>" on its tool card, through the
same progress path as MCP progress; the card's Cancel stops the call and the server's task
ends cancelled (``tasks/cancel`` reached it)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from PySide6.QtCore import Qt

from app.core.agent.events import ToolRequested
from app.core.agent.progress import ProgressReporter
from app.core.permissions.service import Decision
from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from tests.ui.conftest import make_ai_panel, wait_for

MODERN = Path(__file__).parents[1] / "mcp_servers" / "modern_server.py"


def _line(card) -> str:
    return card.progress_row.label.text() if card.progress_row is not None else ""


async def test_the_card_shows_the_task_and_its_cancel_cancels_it_on_the_server(
        qtbot, services, project):
    panel = make_ai_panel(qtbot, services, project)
    assert panel.tool_cards.stop == panel.stop  # a card's Cancel is the panel's Stop
    provider = McpProvider(parse_mcp_config({"mcpServers": {"modern": {
        "command": sys.executable, "args": [str(MODERN)]}}}).servers)
    await provider.start()
    try:
        arguments = {"seconds": 120}
        panel.handle_event(ToolRequested("t1", "job", "modern", arguments,
                                         Decision("allow", None)))
        card = panel.tool_cards.by_id["t1"]
        call = asyncio.ensure_future(provider.call(
            "modern", "job", arguments,
            ToolContext(project_root=project, progress=ProgressReporter("t1",
                                                                        panel.handle_event))))
        panel.tool_cards.stop = call.cancel  # here the run is this one call
        await wait_for(lambda: _line(card).startswith("task "), timeout=20)
        task_id = _line(card).split(" ")[1]
        assert _line(card) == f"task {task_id} · started"
        assert card.progress_row is not None and not card.progress_row.cancel.isHidden()
        qtbot.mouseClick(card.progress_row.cancel, Qt.MouseButton.LeftButton)
        await asyncio.wait({call}, timeout=20)  # bounded: a Cancel that did nothing fails
        assert call.cancelled()
        states = await provider.call("modern", "task_states", {},
                                     ToolContext(project_root=project))
        assert json.JSONDecoder().raw_decode(states.content)[0][task_id] == "cancelled"
    finally:
        await provider.aclose()
