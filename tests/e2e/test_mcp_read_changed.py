"""A resource the model read through ``read_resource`` that its server later updates is marked
on the call's card ("changed since read"), through the real window against the reference
server-everything (it sends ``notifications/resources/updated`` for subscribed resources once
``toggle-subscriber-updates`` is called). Opening another conversation lets go of it."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from app.core.tools.base import ToolContext
from app.ui.ai_panel.read_marks import CHANGED_TEXT
from tests.e2e.test_mcp_audience_flow import call_everything
from tests.ui.conftest import wait_for

TOOL = "everything__read_resource"
URI = "demo://resource/static/document/architecture.md"


async def test_a_read_resource_card_says_when_the_resource_changed(window, fake_anthropic,
                                                                   project):
    services = window.services
    _content, card = await call_everything(window, fake_anthropic, TOOL, {"uri": URI})
    assert card.findChild(QLabel, "resource-changed") is None
    updates = services.mcp.queries.resource_updates("everything")
    assert updates.subscribed(URI)

    started = await services.mcp.call("everything", "toggle-subscriber-updates", {},
                                      ToolContext(project_root=project))
    assert not started.is_error, started.content
    await wait_for(lambda: card.findChild(QLabel, "resource-changed") is not None, timeout=20)
    assert card.findChild(QLabel, "resource-changed").text() == CHANGED_TEXT

    window.ai_panel.conversations.new_conversation()  # closed: no longer followed
    await wait_for(lambda: not updates.subscribed(URI), timeout=20)
    assert URI not in updates.watched
