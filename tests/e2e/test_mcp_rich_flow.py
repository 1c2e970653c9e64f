"""The UI flow with the real reference server-everything (tests/mcp_reference.py): its image
reaches the (fake) model as an image block and the card as a thumbnail; its long-running
operation fills the card's progress bar."""

from __future__ import annotations

import base64

from app.core.permissions.rules import PermissionRule
from app.core.store.profiles import ToolSetting
from app.ui.widgets.tool_card import ToolCard
from tests.fakes.anthropic_server import Response
from tests.mcp_reference import config, everything_entry
from tests.ui.conftest import wait_for


def _allow(window, tool_name: str) -> None:
    window.services.profiles.set_tool(window.profile_id, ToolSetting(tool_name, True, {}))
    window.services.permissions.rules.add(PermissionRule(
        decision="allow", tool_name=tool_name, priority=5))


def _card(window) -> ToolCard:
    return next(w for w in window.ai_panel.transcript.items() if isinstance(w, ToolCard))


async def test_server_everything_image_reaches_the_model_and_the_card(window, fake_anthropic):
    services = window.services
    await services.mcp.apply_config({"everything": config("everything", everything_entry())})
    tool_name = "everything__get-tiny-image"
    await wait_for(lambda: services.registry.get(tool_name) is not None, timeout=30)
    _allow(window, tool_name)
    fake_anthropic.script(Response.tool_use(tool_name, {}), Response.text("a logo"))
    assert window.ai_panel.send("show me the logo")
    await wait_for(lambda: not window.ai_panel.running, timeout=30)

    content = fake_anthropic.last_request.tool_results()[0]["content"]
    assert content[0]["type"] == "text" and "[image 1: image/png" in content[0]["text"]
    image = content[1]
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]).startswith(b"\x89PNG")

    card = _card(window)
    assert card.thumbnails is not None
    await wait_for(lambda: card.thumbnails is not None and card.thumbnails.pending == 0)
    pixmap = card.thumbnails.labels[0].pixmap()
    assert not pixmap.isNull() and pixmap.width() > 0
    assert "image/png" in card.thumbnails.labels[0].toolTip()
    # The tool history holds the note, not the image.
    entry = services.audit.list()[0]
    assert "[image 1: image/png" in entry.output and image["source"]["data"] not in entry.output


async def test_server_everything_progress_fills_the_card(window, fake_anthropic, monkeypatch):
    # Through the app's own MCP provider: the path every MCP tool the model calls takes.
    services = window.services
    await services.mcp.apply_config({"everything": config("everything", everything_entry())})
    tool_name = "everything__trigger-long-running-operation"
    await wait_for(lambda: services.registry.get(tool_name) is not None, timeout=30)
    _allow(window, tool_name)
    seen: list[tuple[int, int, str]] = []
    original = ToolCard.set_progress

    def record(card: ToolCard, progress, total, message) -> None:
        original(card, progress, total, message)
        bar = card.progress_row.bar
        seen.append((bar.value(), bar.maximum(), card.progress_row.label.text()))

    monkeypatch.setattr(ToolCard, "set_progress", record)  # what the bar showed, each time
    fake_anthropic.script(Response.tool_use(tool_name, {"duration": 0.6, "steps": 3}),
                          Response.text("done"))
    assert window.ai_panel.send("run the long operation")
    await wait_for(lambda: not window.ai_panel.running, timeout=30)
    assert seen, "no progress reached the card"
    assert all(maximum == 1000 for _value, maximum, _text in seen)  # determinate
    assert seen[-1][2].endswith("of 3")
    card = _card(window)
    assert card.progress_row is not None and card.progress_row.isHidden()  # finished
    assert "Long running operation completed" in card.result_content
