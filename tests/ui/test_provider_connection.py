"""Settings → Provider → Test connection, against the fake API: the models it lists, and the
API's errors as the same sentences a run reports (the provider speaks the API over httpx)."""

from __future__ import annotations

import pytest

from app.ui.dialogs.settings import ProviderTab
from tests.fakes.anthropic_server import (  # noqa: F401  (fixture)
    FakeAnthropicServer,
    Response,
    fake_anthropic,
)
from tests.ui.conftest import wait_for

KEY = "sk-ant-test-connection-0000"


@pytest.fixture
def tab(qtbot, services, fake_anthropic: FakeAnthropicServer) -> ProviderTab:  # noqa: F811
    tab = ProviderTab(services, services.profiles.ensure_default().id)
    qtbot.addWidget(tab)
    tab.api_key.setText(KEY)
    tab.base_url.setText(fake_anthropic.base_url)
    return tab


async def _test(tab: ProviderTab) -> str:
    tab.test_button.click()
    await wait_for(lambda: tab.test_button.isEnabled())
    return tab.status.text()


async def test_a_working_connection_lists_the_models(
        tab: ProviderTab, fake_anthropic: FakeAnthropicServer) -> None:  # noqa: F811
    fake_anthropic.api_key = KEY
    fake_anthropic.models = ["claude-a", "claude-b", "claude-c"]
    fake_anthropic.models_page_size = 2  # two pages: both are read
    assert await _test(tab) == "Connected: 3 models available."
    # The listed models, and the saved one (never dropped from its picker).
    saved = tab.services.profiles.get(tab.profile_id).model
    assert [tab.model.itemText(i) for i in range(tab.model.count())] == sorted(
        {"claude-a", "claude-b", "claude-c", saved})


async def test_a_wrong_key_says_to_check_it(
        tab: ProviderTab, fake_anthropic: FakeAnthropicServer) -> None:  # noqa: F811
    fake_anthropic.api_key = "another-key"
    text = await _test(tab)
    assert "Anthropic API error (401 authentication_error): invalid x-api-key" in text
    assert "Check the API key in Settings" in text and KEY not in text


async def test_an_overloaded_api_is_reported_without_retrying(
        tab: ProviderTab, fake_anthropic: FakeAnthropicServer) -> None:  # noqa: F811
    fake_anthropic.models_error = Response.error(529)
    text = await _test(tab)
    assert "Anthropic API error (529 overloaded_error): Overloaded" in text
    assert len([r for r in fake_anthropic.requests if r.path == "/v1/models"]) == 1
