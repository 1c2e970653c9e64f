"""An attached MCP resource follows its server's updates, against the real reference
server-everything (tests/.mcp-reference): it advertises ``resources.subscribe`` and, once its
``toggle-subscriber-updates`` tool is called, sends ``notifications/resources/updated`` for
each subscribed resource. The chip re-reads the resource (off the GUI thread) and says
"updated"; removing the chip unsubscribes."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.core.tools.base import ToolContext
from tests.mcp_reference import everything_entry
from tests.ui.conftest import wait_for
from tests.ui.test_mcp_prompts_ui import (  # noqa: F401  (fixtures)
    mcp_services,
    panel_for,
    run_servers,
)

URI = "demo://resource/static/document/architecture.md"


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
