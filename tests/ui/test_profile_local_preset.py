"""The profile dialog's preset for an Anthropic-compatible server on this computer: choosing
it fills in the local address and saves an Anthropic profile that needs no key; reopened, the
preset is shown."""

from __future__ import annotations

from app.core.agent.models.factory import LOCAL_ANTHROPIC_BASE_URL


def test_the_local_preset_round_trips(qtbot, services) -> None:  # type: ignore[no-untyped-def]
    from app.ui.dialogs.profile import LOCAL_PRESET, ProfileDialog

    profile = services.profiles.ensure_default()
    dialog = ProfileDialog(profile, [profile.model])
    qtbot.addWidget(dialog)
    assert dialog.provider.currentIndex() != LOCAL_PRESET
    dialog.provider.setCurrentIndex(LOCAL_PRESET)
    assert dialog.base_url.text() == LOCAL_ANTHROPIC_BASE_URL
    dialog.model.setCurrentText("qwen3-coder")
    dialog._try_accept()
    saved = dialog.profile()
    assert saved is not None
    assert (saved.provider, saved.base_url) == ("anthropic", LOCAL_ANTHROPIC_BASE_URL)
    services.profiles.update(saved)
    reopened = ProfileDialog(services.profiles.get(profile.id), [profile.model])
    qtbot.addWidget(reopened)
    assert reopened.provider.currentIndex() == LOCAL_PRESET
