"""Settings → MCP servers: Sign in / Sign out for an HTTP server behind OAuth (the loopback
fake of tests/fakes/oauth_server.py), on the qasync loop with the real provider."""

from __future__ import annotations

import httpx2
import pytest

from app.core.secrets import KEYRING_SERVICE
from app.core.store.settings import SettingsRepository
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.config.store import McpConfigStore
from app.core.tools.providers.mcp.oauth.sign_in import McpOAuth
from app.core.tools.providers.mcp.provider import McpProvider
from app.ui.dialogs.mcp_settings import McpServersTab
from app.ui.models.mcp_servers_model import McpServersModel
from tests.fakes.oauth_server import FakeOAuthServer
from tests.mcp_servers import demo_server_entry
from tests.ui.conftest import wait_for


class FollowingBrowser:
    def __init__(self) -> None:
        self.opened: list[str] = []

    async def __call__(self, url: str) -> None:
        self.opened.append(url)
        async with httpx2.AsyncClient(follow_redirects=True) as client:
            await client.get(url)


@pytest.fixture
def fake():
    server = FakeOAuthServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def mcp(services):
    store = McpConfigStore(SettingsRepository(services.db))
    provider = McpProvider(on_tools_changed=services.registry.refresh, startup_timeout_s=20)
    browser = FollowingBrowser()
    provider.oauth = McpOAuth(browser)
    yield store, provider, browser
    await provider.aclose()


def _status_of(tab: McpServersTab, name: str) -> str:
    return tab.model.data(tab.model.index(tab.model.row_of(name), McpServersModel.COL_STATUS))


async def test_sign_in_and_out_buttons(qtbot, fake, mcp, memory_keyring):
    store, provider, browser = mcp
    store.save(parse_mcp_config({"mcpServers": {
        "web": {"url": fake.mcp_url}, "local": demo_server_entry()}}).servers)
    tab = McpServersTab(store, provider)
    qtbot.addWidget(tab)
    tab.show()
    await provider.apply_config(store.load())
    await wait_for(lambda: _status_of(tab, "web").startswith("needs sign-in"), timeout=20)
    await wait_for(lambda: _status_of(tab, "local").startswith("running"), timeout=20)
    assert browser.opened == []  # nobody asked yet

    tab.table.selectRow(tab.model.row_of("local"))
    assert not tab.sign_in_button.isEnabled() and not tab.sign_out_button.isEnabled()

    tab.table.selectRow(tab.model.row_of("web"))
    assert tab.sign_in_button.isEnabled() and not tab.sign_out_button.isEnabled()
    assert "needs sign-in" in tab.detail_label.text()

    tab.sign_in_button.click()
    assert "finish in your web browser" in tab.status.text()
    await wait_for(lambda: "web: running." in tab.status.text(), timeout=20)
    assert "Signed in to MCP server" in tab.status.text()
    assert _status_of(tab, "web").startswith("running · 2 tools")
    assert len(browser.opened) == 1
    assert not tab.sign_in_button.isEnabled() and tab.sign_out_button.isEnabled()
    assert (KEYRING_SERVICE, "mcp:web:oauth:tokens") in memory_keyring.values

    tab.sign_out_button.click()
    await wait_for(lambda: "Signed out of web" in tab.status.text(), timeout=20)
    assert _status_of(tab, "web").startswith("needs sign-in")
    assert (KEYRING_SERVICE, "mcp:web:oauth:tokens") not in memory_keyring.values
    assert tab.sign_in_button.isEnabled() and not tab.sign_out_button.isEnabled()


async def test_removing_a_server_deletes_its_sign_in(qtbot, fake, mcp, memory_keyring):
    store, provider, _browser = mcp
    store.save(parse_mcp_config({"mcpServers": {"web": {"url": fake.mcp_url}}}).servers)
    tab = McpServersTab(store, provider)
    qtbot.addWidget(tab)
    await provider.apply_config(store.load())
    await tab.controller.sign_in("web")
    assert (KEYRING_SERVICE, "mcp:web:oauth:tokens") in memory_keyring.values
    await tab.controller.remove("web")
    assert provider.server_names() == []
    assert not any(key.startswith("mcp:web:") for _, key in memory_keyring.values)
