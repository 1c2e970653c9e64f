"""One model list: the models Settings → Provider fetched are the ones the toolbar's Model
picker offers (and the profile dialog), not a list of its own."""

from __future__ import annotations

from app.ui.main_window import MainWindow
from tests.fakes.anthropic_server import (  # noqa: F401  (fixture)
    FakeAnthropicServer,
    fake_anthropic,
)
from tests.ui.conftest import wait_for

KEY = "sk-ant-one-list-0000"


def _items(combo) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count())]


async def test_models_fetched_in_settings_reach_the_toolbar(
        qtbot, services, project, fake_anthropic: FakeAnthropicServer) -> None:  # noqa: F811
    window = MainWindow()
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.ready, timeout=5000):
        window.attach_services(services, project)
    toolbar = window.profiles.model_picker
    dialog = window.profiles.open_settings()
    tab = dialog.provider_tab
    assert _items(tab.model) == _items(toolbar)  # the same list before any fetch

    fake_anthropic.api_key = KEY
    fake_anthropic.models = ["claude-a", "claude-b"]
    tab.api_key.setText(KEY)
    tab.base_url.setText(fake_anthropic.base_url)
    tab.test_button.click()
    await wait_for(lambda: tab.test_button.isEnabled())
    assert tab.status.text() == "Connected: 2 models available."

    saved = services.profiles.get(window.profile_id).model
    assert _items(tab.model) == sorted({"claude-a", "claude-b", saved})
    assert _items(toolbar) == _items(tab.model)
    assert toolbar.currentText() == saved  # the choice is kept
    dialog.reject()
