"""McpSettingsController without widgets: validation, save/rename/remove, import, restart and
how each outcome is reported. Servers are disabled or unstartable, so no process runs long."""

from __future__ import annotations

import json
from pathlib import Path

import keyring
import pytest

from app.core.secrets import KEYRING_SERVICE
from app.core.store.settings import SettingsRepository
from app.core.tools.providers.mcp.config.model import SECRET_PLACEHOLDER
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.config.store import McpConfigStore
from app.core.tools.providers.mcp.provider import McpProvider
from app.ui.controllers.mcp_settings import (
    NEW_SERVER_TEMPLATE,
    McpSettingsController,
    check_servers_text,
)
from app.ui.models.mcp_servers_model import McpServersModel
from tests.ui.conftest import wait_for


@pytest.fixture
async def mcp(db):
    store = McpConfigStore(SettingsRepository(db))
    provider = McpProvider()
    yield store, provider
    await provider.aclose()


def _servers(**entries):
    return parse_mcp_config({"mcpServers": entries}).servers


def _controller(store, provider) -> tuple[McpSettingsController, list[tuple[str, bool]]]:
    controller = McpSettingsController(store, provider)
    said: list[tuple[str, bool]] = []
    controller.message.connect(lambda text, error: said.append((text, error)))
    return controller, said


def test_check_reports_every_problem_and_accepts_valid_text():
    assert check_servers_text(NEW_SERVER_TEMPLATE, []).servers.keys() == {"my-server"}
    broken = check_servers_text('{"mcpServers": {', [])
    assert not broken.ok and "not valid JSON" in broken.errors[0] and broken.servers == {}
    empty = check_servers_text('{"mcpServers": {}}', [])
    assert empty.errors == ["Add at least one server inside \"mcpServers\"."]
    clash = check_servers_text('{"mcpServers": {"Files": {"command": "x"}}}', ["files"])
    assert clash.errors == ["A server named 'Files' already exists; choose another name."]
    assert clash.servers == {}  # nothing to save while there is an error


async def test_editing_a_server_may_keep_its_own_name(mcp):
    store, provider = mcp
    store.save(_servers(a={"command": "x", "disabled": True},
                        b={"command": "y", "disabled": True}))
    controller, _ = _controller(store, provider)
    text = controller.editor_text("a")
    assert json.loads(text)["mcpServers"]["a"]["command"] == "x"
    assert controller.check(text, editing="a").ok
    assert not controller.check(text, editing=None).ok
    assert not controller.check(text.replace('"a"', '"b"'), editing="a").ok
    assert controller.editor_text(None) == NEW_SERVER_TEMPLATE


async def test_a_rename_keeps_the_place_in_the_list_and_the_stored_secret(mcp):
    store, provider = mcp
    store.save(_servers(a={"command": "x", "disabled": True},
                        b={"command": "y", "env": {"TOKEN": "s3cret"}, "disabled": True},
                        c={"command": "z", "disabled": True}))
    controller, said = _controller(store, provider)
    assert controller.model.names() == ["a", "b", "c"]

    text = controller.editor_text("b")
    assert SECRET_PLACEHOLDER in text and "s3cret" not in text
    renamed = parse_mcp_config(text.replace('"b"', '"bee"')).servers
    await controller.save_edit(renamed, editing="b")
    assert controller.model.names() == ["a", "bee", "c"]
    assert list(store.load_public()) == ["a", "bee", "c"]
    assert store.load()["bee"].env == {"TOKEN": "s3cret"}
    assert keyring.get_password(KEYRING_SERVICE, "mcp:b:env:TOKEN") is None
    assert said == [("Saved bee. Applying…", False), ("Saved bee.", False)]
    assert provider.server_names() == ["a", "bee", "c"]
    status = controller.model.index(1, McpServersModel.COL_STATUS)
    assert controller.model.data(status) == "disabled"

    said.clear()
    await controller.remove("bee")
    assert controller.model.names() == ["a", "c"] and provider.server_names() == ["a", "c"]
    assert said[-1] == ("Removed bee.", False)
    assert keyring.get_password(KEYRING_SERVICE, "mcp:bee:env:TOKEN") is None


async def test_restart_says_why_it_cannot(mcp):
    store, provider = mcp
    store.save(_servers(off={"command": "x", "disabled": True}, new={"command": "y"}))
    controller, said = _controller(store, provider)
    assert controller.restart("off") is None
    assert controller.restart("new") is None  # saved, but the provider has not loaded it
    assert said == [("off is disabled: edit it and remove \"disabled\" first.", False),
                    ("new is not loaded yet; wait for the change to be applied.", False)]


async def test_a_server_that_fails_to_start_is_named_and_the_model_follows(mcp, tmp_path):
    store, provider = mcp
    controller, said = _controller(store, provider)
    missing = str(tmp_path / "no-such-server")
    await controller.save_edit(_servers(ghost={"command": missing}), editing=None)
    await wait_for(lambda: controller.model.data(controller.model.index(
        0, McpServersModel.COL_STATUS)).startswith("failed"))
    text, error = said[-1]
    assert error and "Failed to start: ghost" in text
    assert controller.status("ghost") is not None
    assert controller.status("nobody") is None


async def test_import_reports_nothing_new_and_unreadable_files(mcp, tmp_path):
    store, provider = mcp
    store.save(_servers(demo={"command": "mine", "disabled": True}))
    controller, said = _controller(store, provider)
    same = tmp_path / "same.json"
    same.write_text(json.dumps({"mcpServers": {"demo": {"command": "theirs"}}}),
                    encoding="utf-8")
    assert controller.import_file(same) is None
    assert said[-1] == (f"Nothing imported from {same}.\nSkipped demo: a server with that "
                        "name exists already.", False)
    assert store.load_public()["demo"].command == "mine"

    missing = tmp_path / "missing.json"
    assert controller.import_file(missing) is None
    text, error = said[-1]
    assert error and text.startswith("Not imported: ")


async def test_a_failing_action_is_reported_not_lost(mcp, monkeypatch):
    store, provider = mcp
    controller, said = _controller(store, provider)

    async def broken(_configs):
        raise RuntimeError("provider exploded")

    monkeypatch.setattr(provider, "apply_config", broken)
    future = controller.save_edit(_servers(x={"command": "x", "disabled": True}), None)
    with pytest.raises(RuntimeError):
        await future
    await wait_for(lambda: said[-1][1])
    assert said[-1] == ("Failed: RuntimeError: provider exploded", True)


def test_import_start_dir_falls_back_to_home(monkeypatch, tmp_path, db):
    monkeypatch.setattr("app.ui.controllers.mcp_settings.claude_desktop_config_paths",
                        lambda: [tmp_path / "absent" / "claude_desktop_config.json"])
    controller = McpSettingsController(McpConfigStore(SettingsRepository(db)), McpProvider())
    assert controller.import_start_dir() == str(Path.home())
    (tmp_path / "absent").mkdir()
    assert controller.import_start_dir() == str(tmp_path / "absent")
