"""An attached MCP resource follows its server's updates, against the real reference
server-everything (tests/.mcp-reference): it advertises ``resources.subscribe`` and, once its
``toggle-subscriber-updates`` tool is called, sends ``notifications/resources/updated`` for
each subscribed resource. The chip re-reads the resource (off the GUI thread) and says
"updated"; removing the chip unsubscribes. The same against the 2026-07-28 test server
(tests/mcp_servers/modern_server.py), whose updates come through ``subscriptions/listen``."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt

from app.core.tools.base import ToolContext
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.mcp_reference import everything_entry
from tests.ui.conftest import wait_for
from tests.ui.test_mcp_prompts_ui import (  # noqa: F401  (fixtures)
    mcp_services,
    panel_for,
    run_servers,
)

URI = "demo://resource/static/document/architecture.md"
MODERN = Path(__file__).parents[1] / "mcp_servers" / "modern_server.py"


async def attach(qtbot, panel, uri: str):
    extras = panel.mcp_prompts
    extras.attach_resource_action.trigger()
    await wait_for(lambda: extras.browser is not None)
    browser = extras.browser
    await wait_for(lambda: browser.loaded, timeout=20)
    assert browser.select_uri(uri)
    qtbot.mouseClick(browser.attach_button, Qt.MouseButton.LeftButton)
    tray = panel.attachment_tray
    await wait_for(lambda: tray.attachments() and not tray.busy, timeout=20)
    [chip] = tray.chips
    return chip


async def test_an_updated_attached_resource_is_read_again_and_its_chip_says_so(
        qtbot, mcp_services, project):  # noqa: F811
    await run_servers(mcp_services, ev=everything_entry())
    provider = mcp_services.mcp
    panel, _ = panel_for(qtbot, mcp_services, project)
    chip = await attach(qtbot, panel, URI)
    first = chip.attachment
    refresh = panel.mcp_prompts.resource_refresh
    assert refresh is not None and refresh.tracked_chips() == [chip]
    updates = provider.queries.resource_updates("ev")
    assert URI in updates.watched and updates.subscribed(URI)
    refreshed: list[object] = []
    refresh.refreshed.connect(refreshed.append)

    started = await provider.call("ev", "toggle-subscriber-updates", {},
                                  ToolContext(project_root=project))
    assert not started.is_error, started.content
    await wait_for(lambda: refreshed, timeout=20)  # the first is sent at once
    assert refreshed[0] is chip
    assert " · updated " in chip.label.text() and not refresh.is_stale(chip)
    assert chip.attachment is not first  # read again: what is sent is what the server has now
    assert chip.attachment.data == first.data
    assert panel.attachment_tray.attachments() == [chip.attachment]

    qtbot.mouseClick(chip.remove_button, Qt.MouseButton.LeftButton)
    assert refresh.tracked_chips() == []
    await wait_for(lambda: not updates.subscribed(URI), timeout=20)  # unsubscribed
    assert URI not in updates.watched


async def test_a_2026_server_update_refreshes_the_chip_and_a_failed_reread_keeps_it_stale(
        qtbot, mcp_services, project, fake_anthropic_env):  # noqa: F811
    """The 2026-07-28 test server: its update comes through ``subscriptions/listen``, the new
    content replaces the old one; when reading it again fails, the chip says so and the
    content attached before is kept (and sent)."""
    await run_servers(mcp_services, modern={"command": sys.executable, "args": [str(MODERN)]})
    provider = mcp_services.mcp
    panel, _ = panel_for(qtbot, mcp_services, project)
    chip = await attach(qtbot, panel, "note://current")
    assert chip.attachment.data == b"first note"
    refresh = panel.mcp_prompts.resource_refresh
    updates = provider.queries.resource_updates("modern")
    await wait_for(lambda: updates.listened == ("note://current",), timeout=20)
    refreshed: list[object] = []
    refresh.refreshed.connect(refreshed.append)
    ctx = ToolContext(project_root=project)

    await provider.call("modern", "update_note", {"text": "second note"}, ctx)
    await wait_for(lambda: len(refreshed) == 1, timeout=20)
    assert chip.attachment.data == b"second note" and " · updated " in chip.label.text()

    await provider.call("modern", "update_note", {"text": "third", "broken": True}, ctx)
    await wait_for(lambda: len(refreshed) == 2, timeout=20)
    assert refresh.is_stale(chip) and "old content" in chip.label.text()
    assert "Error reading resource note://current" in chip.toolTip()
    assert chip.attachment.data == b"second note"  # kept, marked stale

    fake_anthropic_env.script(Response.text("Read it."))
    panel.prompt.setPlainText("Summarise the note.")
    assert panel.send()
    await wait_for(lambda: not panel.running, timeout=20)
    document = fake_anthropic_env.message_requests[0].body["messages"][0]["content"][0]
    assert document["source"]["data"] == "second note"
    await wait_for(lambda: updates.listened == (), timeout=20)  # sent: the chip let go
