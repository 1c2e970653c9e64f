"""Content ``annotations.audience`` through the real loop, against the reference
server-everything's ``get-annotated-message``: what a server marks for the user only reaches
the card and never the (fake) model; what it marks for the assistant only reaches the model and
never the card."""

from __future__ import annotations

from app.core.permissions.rules import PermissionRule
from app.core.store.profiles import ToolSetting
from app.core.tools.providers.mcp.results import PERSON_ONLY_NOTE
from app.ui.widgets.tool_card import ToolCard
from tests.fakes.anthropic_server import Response
from tests.mcp_reference import config, everything_entry
from tests.ui.conftest import wait_for

TOOL = "everything__get-annotated-message"


async def _call(window, fake_anthropic, tool_input: dict) -> tuple[object, ToolCard]:
    return await call_everything(window, fake_anthropic, TOOL, tool_input)


async def call_everything(window, fake_anthropic, tool: str,
                          tool_input: dict) -> tuple[object, ToolCard]:
    """The model calls server-everything's ``tool`` (allowed by a rule): what the model got
    back, and the call's card."""
    services = window.services
    await services.mcp.apply_config({"everything": config("everything", everything_entry())})
    await wait_for(lambda: services.registry.get(tool) is not None, timeout=30)
    services.profiles.set_tool(window.profile_id, ToolSetting(tool, True, {}))
    services.permissions.rules.add(PermissionRule(decision="allow", tool_name=tool,
                                                  priority=5))
    fake_anthropic.script(Response.tool_use(tool, tool_input), Response.text("noted"))
    assert window.ai_panel.send("show the message")
    await wait_for(lambda: not window.ai_panel.running, timeout=30)
    card = next(w for w in window.ai_panel.transcript.items() if isinstance(w, ToolCard))
    return fake_anthropic.last_request.tool_results()[0]["content"], card


async def test_user_only_content_reaches_the_card_not_the_model(window, fake_anthropic):
    content, card = await _call(window, fake_anthropic,
                                {"messageType": "success", "includeImage": True})
    # The text and the image are both for the user only: the model gets neither, only a note.
    assert content == PERSON_ONLY_NOTE
    shown = card.result_section.body.toPlainText()
    assert "Operation completed successfully" in shown
    assert card.thumbnails is not None and len(card.thumbnails.labels) == 1
    await wait_for(lambda: card.thumbnails is not None and card.thumbnails.pending == 0)
    assert "image/png" in card.thumbnails.labels[0].toolTip()
    live_images = [label.toolTip() for label in card.thumbnails.labels]

    # Reopened (read back from the database), the card shows the same content for the person.
    panel = window.ai_panel
    panel.conversations.open(panel.session.conversation_id)
    reopened = next(w for w in panel.transcript.items() if isinstance(w, ToolCard))
    assert reopened is not card
    assert reopened.result_section.body.toPlainText() == shown
    assert reopened.thumbnails is not None
    await wait_for(lambda: reopened.thumbnails.pending == 0)
    assert [label.toolTip() for label in reopened.thumbnails.labels] == live_images

    # Sent on from the reopened conversation, the model still never gets it.
    fake_anthropic.script(Response.text("again"))
    assert panel.send("and now?")
    await wait_for(lambda: not panel.running, timeout=30)
    request = str(fake_anthropic.last_request.body)
    assert "Operation completed successfully" not in request
    assert PERSON_ONLY_NOTE in request


async def test_assistant_only_content_reaches_the_model_not_the_card(window, fake_anthropic):
    content, card = await _call(window, fake_anthropic, {"messageType": "debug"})
    assert content == "Debug: Cache hit ratio 0.95, latency 150ms"
    assert "Cache hit ratio" not in card.result_section.body.toPlainText()
    assert card.thumbnails is None


async def test_content_for_both_reaches_both(window, fake_anthropic):
    content, card = await _call(window, fake_anthropic, {"messageType": "error"})
    assert content == "Error: Operation failed"
    assert "Error: Operation failed" in card.result_section.body.toPlainText()

