"""Without an OS keyring the key lasts until the app quits: the messages say so (never that
it "is kept in the OS keyring") and say exactly how to keep it across starts."""

from __future__ import annotations

import keyring
import pytest
from keyring.backends.fail import Keyring as NoKeyring

from app.core import secrets
from app.core.agent.models import ProviderAuthError, create_provider
from app.core.store.profiles import AgentProfile


@pytest.fixture(autouse=True)
def _no_key_anywhere(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr(secrets, "_session", {}, raising=False)


@pytest.fixture
def no_keyring(memory_keyring):
    keyring.set_keyring(NoKeyring())
    yield
    keyring.set_keyring(memory_keyring)


def _missing_key_message() -> str:
    with pytest.raises(ProviderAuthError) as info:
        create_provider(AgentProfile(name="p"))
    return str(info.value)


def test_without_a_keyring_the_run_says_how_to_keep_the_key(no_keyring):
    text = _missing_key_message()
    assert "kept in the OS keyring" not in text
    assert "no OS keyring" in text and "until the app quits" in text
    assert "export ANTHROPIC_API_KEY=" in text  # the exact step
    assert "unlock" in text  # or get the keyring working


def test_with_a_keyring_the_run_says_the_key_is_stored_there(memory_keyring):
    text = _missing_key_message()
    assert "Settings → Provider" in text and "stored in the OS keyring" in text
    assert "ANTHROPIC_API_KEY" in text


def test_settings_say_how_to_keep_the_key_without_a_keyring(qtbot, services, no_keyring):
    from app.ui.dialogs.settings import ProviderTab

    tab = ProviderTab(services, services.profiles.ensure_default().id)
    qtbot.addWidget(tab)
    note = tab.keyring_note.text()
    assert "until the app quits" in note and "export ANTHROPIC_API_KEY=" in note
