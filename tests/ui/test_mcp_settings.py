"""Settings → MCP servers tab: status with stderr, restart, JSON editor, import, remove.

Runs the demo MCP server (tests/mcp_servers) as a real subprocess on the qasync loop, so this
also proves that server starts do not need anything but the GUI's own event loop.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import keyring
import pytest

from app.core.secrets import KEYRING_SERVICE
from app.core.store.settings import SettingsRepository
from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp import McpProvider
from app.core.tools.providers.mcp_config import (
    SECRET_PLACEHOLDER,
    SETTINGS_KEY,
    McpConfigStore,
    parse_mcp_config,
)
from app.ui.dialogs.mcp_settings import McpServersTab
from tests.mcp_servers import demo_server_entry
from tests.ui.conftest import wait_for


@pytest.fixture
async def mcp(services):
    store = McpConfigStore(SettingsRepository(services.db))
    provider = McpProvider(on_tools_changed=services.registry.refresh)
    services.registry.register_provider(provider)
    yield store, provider
    await provider.aclose()


def _servers(**entries):
    return parse_mcp_config({"mcpServers": entries}).servers


def _tab(qtbot, store, provider) -> McpServersTab:
    tab = McpServersTab(store, provider)
    qtbot.addWidget(tab)
    tab.show()
    return tab


async def test_status_shows_failure_with_stderr_and_restart_recovers(qtbot, mcp, services,
                                                                      project):
    store, provider = mcp
    store.save(_servers(demo=demo_server_entry()))
    tab = _tab(qtbot, store, provider)
    assert tab.status_of("demo") == "not started"
    await provider.apply_config(store.load())
    await wait_for(lambda: tab.status_of("demo").startswith("running"))
    assert "8 tools" in tab.status_of("demo")
    assert "demo__echo" in tab.detail_label.text()
    assert services.registry.get("demo__echo") is not None  # the tools list can show it

    result = await provider.call("demo", "crash", {}, ToolContext(working_dir=project))
    assert result.is_error
    await wait_for(lambda: tab.status_of("demo").startswith("failed"))
    tab.select("demo")
    assert "crashing on purpose" in tab.stderr_view.toPlainText()
    assert "exited unexpectedly" in tab.detail_label.text()

    tab.restart_button.click()
    await wait_for(lambda: tab.status_of("demo").startswith("running"), timeout=20)
    await wait_for(lambda: tab.pending() == 0)
    assert "demo: running." in tab.status.text()
    ok = await provider.call("demo", "echo", {"text": "back"}, ToolContext(working_dir=project))
    assert ok.content == "back"


async def test_add_validates_json_and_starts_the_server_in_the_background(qtbot, mcp, services,
                                                                         memory_keyring):
    store, provider = mcp
    tab = _tab(qtbot, store, provider)
    dialog = tab.add_server()
    assert dialog.isVisible() and tab.dialog is dialog

    dialog.editor.setPlainText('{"mcpServers": {"x": {"command": 5}}')
    assert not dialog.ok_button.isEnabled()
    assert "not valid JSON" in dialog.problems.text()
    dialog.editor.setPlainText('{"mcpServers": {"x": {"command": 5}, "builtin": {"url": "x"}}}')
    assert not dialog.ok_button.isEnabled()
    assert "command: must be a non-empty string" in dialog.problems.text()
    assert "reserved" in dialog.problems.text()

    entry = demo_server_entry(env={"DEMO_SECRET": "abc"})
    dialog.editor.setPlainText(json.dumps({"mcpServers": {"demo": entry}}))
    assert dialog.ok_button.isEnabled() and "Valid: demo" in dialog.problems.text()
    started = time.monotonic()
    dialog.ok_button.click()
    assert time.monotonic() - started < 0.5  # the click never waits for the server
    await wait_for(lambda: tab.pending() == 0, timeout=30)
    assert tab.status_of("demo").startswith("running")
    assert "secret length 3" in provider.status("demo")[1]
    raw = services.db.conn.execute("SELECT value FROM settings WHERE key = ?",
                                   (SETTINGS_KEY,)).fetchone()[0]
    assert "abc" not in raw and SECRET_PLACEHOLDER in raw
    assert keyring.get_password(KEYRING_SERVICE, "mcp:demo:env:DEMO_SECRET") == "abc"

    # A second server may not take an existing name.
    again = tab.add_server()
    again.editor.setPlainText(json.dumps({"mcpServers": {"DEMO": {"command": "x"}}}))
    assert not again.ok_button.isEnabled() and "already exists" in again.problems.text()
    again.reject()


async def test_edit_keeps_the_stored_secret_and_remove_stops_the_server(qtbot, mcp):
    store, provider = mcp
    store.save(_servers(demo=demo_server_entry(env={"DEMO_SECRET": "hunter2"})))
    tab = _tab(qtbot, store, provider)
    await provider.apply_config(store.load())
    tab.select("demo")

    dialog = tab.edit_selected()
    text = dialog.editor.toPlainText()
    assert SECRET_PLACEHOLDER in text and "hunter2" not in text
    data = json.loads(text)
    data["mcpServers"]["demo"]["timeout"] = 5
    dialog.editor.setPlainText(json.dumps(data))
    dialog.ok_button.click()
    await wait_for(lambda: tab.pending() == 0, timeout=30)
    assert provider.configs()["demo"].timeout_s == 5
    assert provider.status("demo")[0] == "running"
    assert "secret length 7" in provider.status("demo")[1]  # the stored value was kept

    renaming = tab.edit_selected()
    renaming.editor.setPlainText(renaming.editor.toPlainText().replace('"demo"', '"notes"'))
    renaming.ok_button.click()
    await wait_for(lambda: tab.pending() == 0, timeout=30)
    assert tab.server_names() == ["notes"] and provider.server_names() == ["notes"]
    assert "secret length 7" in provider.status("notes")[1]
    assert keyring.get_password(KEYRING_SERVICE, "mcp:demo:env:DEMO_SECRET") is None

    tab.select("notes")
    box = tab.remove_selected()
    assert "Remove 'notes'?" in box.text()
    box.button(box.StandardButton.Yes).click()
    await wait_for(lambda: tab.pending() == 0, timeout=30)
    assert tab.server_names() == [] and provider.server_names() == []
    assert store.load() == {}
    assert keyring.get_password(KEYRING_SERVICE, "mcp:notes:env:DEMO_SECRET") is None


def _claude_config(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "globalShortcut": "Alt+Space",
        "mcpServers": {
            "demo": {"command": "already-there"},
            "notes": {"command": "notes-mcp", "args": ["--db", "x"], "disabled": True,
                      "alwaysAllow": ["read_note"]},
        },
    }), encoding="utf-8")
    return path


async def test_import_from_a_claude_desktop_config_file(qtbot, mcp, tmp_path):
    store, provider = mcp
    store.save(_servers(demo={"command": "mine", "disabled": True}))
    tab = _tab(qtbot, store, provider)
    path = _claude_config(tmp_path / "claude_desktop_config.json")
    tab.import_file(str(path))
    await wait_for(lambda: tab.pending() == 0)
    assert tab.server_names() == ["demo", "notes"]
    assert store.load()["demo"].command == "mine"  # never replaced
    assert store.load()["notes"].args == ("--db", "x")
    message = tab.status.text()
    assert "Imported notes" in message and "Skipped demo" in message
    assert "never auto-approves" in message
    assert tab.status_of("notes") == "disabled"

    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    tab.import_file(str(broken))
    assert "Not imported" in tab.status.text() and "not valid JSON" in tab.status.text()


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="Linux config location")
async def test_import_button_finds_claude_desktops_own_config(qtbot, mcp, tmp_path,
                                                              monkeypatch):
    store, provider = mcp
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    _claude_config(tmp_path / "xdg" / "Claude" / "claude_desktop_config.json")
    tab = _tab(qtbot, store, provider)
    tab.import_claude_button.click()
    await wait_for(lambda: tab.pending() == 0)
    assert tab.server_names() == ["demo", "notes"]
