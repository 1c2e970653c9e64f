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
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app.core.secrets import KEYRING_SERVICE
from app.core.settings_fields import MCP_SERVERS
from app.core.store.settings import SettingsRepository
from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.model import SECRET_PLACEHOLDER
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.config.store import McpConfigStore
from app.core.tools.providers.mcp.provider import McpProvider
from app.ui.dialogs.mcp_settings import McpServerEditor, McpServersTab
from app.ui.models.mcp_servers_model import McpServersModel
from tests.mcp_servers import demo_server_entry, quirks_server_entry
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


def _status_of(tab: McpServersTab, name: str) -> str:
    """The Status cell, as the table shows it."""
    row = tab.model.row_of(name)
    assert row >= 0, f"{name} is not listed"
    return tab.model.data(tab.model.index(row, McpServersModel.COL_STATUS))


def _select(tab: McpServersTab, name: str) -> None:
    tab.table.selectRow(tab.model.row_of(name))


def _open_editor(tab: McpServersTab, button) -> McpServerEditor:
    """Click ``button`` and return the editor it opened (the one visible child editor)."""
    button.click()
    editors = [d for d in tab.findChildren(McpServerEditor) if d.isVisible()]
    assert len(editors) == 1
    return editors[0]


async def _settled(tab: McpServersTab, timeout: float = 30) -> None:
    """Until the status line no longer says a change is being applied."""
    await wait_for(lambda: "Applying…" not in tab.status.text(), timeout=timeout)


async def test_status_shows_failure_with_stderr_and_restart_recovers(qtbot, mcp, services,
                                                                      project):
    store, provider = mcp
    store.save(_servers(demo=demo_server_entry()))
    tab = _tab(qtbot, store, provider)
    assert _status_of(tab, "demo") == "not started"
    await provider.apply_config(store.load())
    await wait_for(lambda: _status_of(tab, "demo").startswith("running"))
    assert "8 tools" in _status_of(tab, "demo")
    assert "demo__echo" in tab.detail_label.text()
    assert services.registry.get("demo__echo") is not None  # the tools list can show it

    result = await provider.call("demo", "crash", {}, ToolContext(project_root=project))
    assert result.is_error
    await wait_for(lambda: _status_of(tab, "demo").startswith("failed"))
    _select(tab, "demo")
    assert "crashing on purpose" in tab.stderr_view.toPlainText()
    assert "exited unexpectedly" in tab.detail_label.text()

    tab.restart_button.click()
    assert "Restarting demo" in tab.status.text()
    await wait_for(lambda: "demo: running." in tab.status.text(), timeout=20)
    assert _status_of(tab, "demo").startswith("running")
    ok = await provider.call("demo", "echo", {"text": "back"}, ToolContext(project_root=project))
    assert ok.content == "back"


async def test_add_validates_json_and_starts_the_server_in_the_background(qtbot, mcp, services,
                                                                         memory_keyring):
    store, provider = mcp
    tab = _tab(qtbot, store, provider)
    dialog = _open_editor(tab, tab.add_button)

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
    assert "Added demo. Applying…" in tab.status.text()
    await _settled(tab)
    assert _status_of(tab, "demo").startswith("running")
    assert "secret length 3" in provider.status("demo")[1]
    raw = services.db.conn.execute("SELECT value FROM settings WHERE key = ?",
                                   (MCP_SERVERS.key,)).fetchone()[0]
    assert "abc" not in raw and SECRET_PLACEHOLDER in raw
    assert keyring.get_password(KEYRING_SERVICE, "mcp:demo:env:DEMO_SECRET") == "abc"

    # A second server may not take an existing name.
    again = _open_editor(tab, tab.add_button)
    again.editor.setPlainText(json.dumps({"mcpServers": {"DEMO": {"command": "x"}}}))
    assert not again.ok_button.isEnabled() and "already exists" in again.problems.text()
    again.reject()


async def test_edit_keeps_the_stored_secret_and_remove_stops_the_server(qtbot, mcp):
    store, provider = mcp
    store.save(_servers(demo=demo_server_entry(env={"DEMO_SECRET": "hunter2"})))
    tab = _tab(qtbot, store, provider)
    await provider.apply_config(store.load())
    _select(tab, "demo")

    dialog = _open_editor(tab, tab.edit_button)
    text = dialog.editor.toPlainText()
    assert SECRET_PLACEHOLDER in text and "hunter2" not in text
    data = json.loads(text)
    data["mcpServers"]["demo"]["timeout"] = 5
    dialog.editor.setPlainText(json.dumps(data))
    dialog.ok_button.click()
    await _settled(tab)
    assert provider.configs()["demo"].timeout_s == 5
    assert provider.status("demo")[0] == "running"
    assert "secret length 7" in provider.status("demo")[1]  # the stored value was kept

    renaming = _open_editor(tab, tab.edit_button)
    renaming.editor.setPlainText(renaming.editor.toPlainText().replace('"demo"', '"notes"'))
    renaming.ok_button.click()
    await _settled(tab)
    assert tab.model.names() == ["notes"] and provider.server_names() == ["notes"]
    assert "secret length 7" in provider.status("notes")[1]
    assert keyring.get_password(KEYRING_SERVICE, "mcp:demo:env:DEMO_SECRET") is None

    assert tab.selected_name() == "notes"  # the old name is gone: the first row is selected
    tab.remove_button.click()
    box = next(b for b in tab.findChildren(QMessageBox) if b.isVisible())
    assert "Remove 'notes'?" in box.text()
    box.button(QMessageBox.StandardButton.Yes).click()
    await _settled(tab)
    assert tab.model.names() == [] and provider.server_names() == []
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


def _choose_file(monkeypatch, path: Path) -> list[str]:
    """Answer the next "Import file…" chooser with ``path``; returns where it opened."""
    opened_in: list[str] = []

    def choose(_parent, _caption, start, _filter):
        opened_in.append(start)
        return str(path), ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", choose)
    return opened_in


async def test_import_from_a_claude_desktop_config_file(qtbot, mcp, tmp_path, monkeypatch):
    store, provider = mcp
    store.save(_servers(demo={"command": "mine", "disabled": True}))
    tab = _tab(qtbot, store, provider)
    path = _claude_config(tmp_path / "claude_desktop_config.json")
    _choose_file(monkeypatch, path)
    tab.import_file_button.click()
    await _settled(tab)
    assert tab.model.names() == ["demo", "notes"]
    assert store.load()["demo"].command == "mine"  # never replaced
    assert store.load()["notes"].args == ("--db", "x")
    message = tab.status.text()
    assert "Imported notes" in message and "Skipped demo" in message
    assert "never auto-approves" in message
    assert _status_of(tab, "notes") == "disabled"

    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    _choose_file(monkeypatch, broken)
    tab.import_file_button.click()
    assert "Not imported" in tab.status.text() and "not valid JSON" in tab.status.text()


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="Linux config location")
async def test_import_button_finds_claude_desktops_own_config(qtbot, mcp, tmp_path,
                                                              monkeypatch):
    store, provider = mcp
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    _claude_config(tmp_path / "xdg" / "Claude" / "claude_desktop_config.json")
    tab = _tab(qtbot, store, provider)
    tab.import_claude_button.click()
    assert "Imported demo, notes" in tab.status.text()
    await _settled(tab)
    assert tab.model.names() == ["demo", "notes"]


async def test_import_button_asks_for_the_file_when_claude_desktop_has_none(
        qtbot, mcp, tmp_path, monkeypatch):
    store, provider = mcp
    # No Claude Desktop config anywhere it is looked for.
    monkeypatch.setattr("app.ui.controllers.mcp_settings.find_claude_desktop_config",
                        lambda: None)
    path = _claude_config(tmp_path / "elsewhere.json")
    opened_in = _choose_file(monkeypatch, path)
    tab = _tab(qtbot, store, provider)
    tab.import_claude_button.click()
    assert len(opened_in) == 1
    await _settled(tab)
    assert tab.model.names() == ["demo", "notes"]


async def test_the_selection_survives_servers_being_added_and_status_changes(qtbot, mcp,
                                                                            tmp_path):
    store, provider = mcp
    store.save(_servers(a={"command": "x", "disabled": True},
                        b={"command": "y", "disabled": True}))
    tab = _tab(qtbot, store, provider)
    assert tab.selected_name() == "a"  # something is always selected when there is a server
    _select(tab, "b")
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"mcpServers": {"c": {"command": "z", "disabled": True}}}),
                     encoding="utf-8")
    await tab.controller.import_file(extra)
    assert tab.model.names() == ["a", "b", "c"]
    assert tab.selected_name() == "b"
    assert _status_of(tab, "b") == "disabled"  # the provider loaded them: status only changed
    assert tab.selected_name() == "b" and "<b>b</b> — disabled" in tab.detail_label.text()


async def test_the_servers_log_messages_and_level_show_under_it(qtbot, mcp, project):
    store, provider = mcp
    store.save(_servers(q=quirks_server_entry()))
    tab = _tab(qtbot, store, provider)
    await provider.apply_config(store.load())
    await wait_for(lambda: _status_of(tab, "q").startswith("running"))
    _select(tab, "q")
    assert tab.log_level.currentText() == "warning"
    tab.log_level.setCurrentText("debug")
    assert provider.server_log("q").level == "debug"
    ctx = ToolContext(project_root=project)
    deadline = time.monotonic() + 20
    while (await provider.call("q", "log_level", {}, ctx)).content != "debug":
        assert time.monotonic() < deadline  # sent by the server's own task
    await provider.call("q", "log", {}, ctx)
    await wait_for(lambda: "ERROR [quirks] error message" in tab.log_view.toPlainText())
    assert "DEBUG [quirks] debug message" in tab.log_view.toPlainText()
