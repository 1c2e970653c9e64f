"""The profile dialog's reasoning and caching options: shown from the stored profile, saved
back, and what the next request sends (request_options)."""

from __future__ import annotations

from app.core.agent.request_options import request_options


def test_reasoning_options_round_trip_to_the_request(qtbot, services, tmp_path):
    from app.ui.dialogs.profile import ProfileDialog

    profile = services.profiles.ensure_default()
    dialog = ProfileDialog(profile, [profile.model])
    qtbot.addWidget(dialog)
    assert dialog.thinking.currentData() == "off"
    assert dialog.effort.currentData() is None and dialog.effort.currentIndex() == 0
    assert dialog.prompt_cache.isChecked() and dialog.cache_ttl.currentData() == "5m"
    dialog.thinking.setCurrentIndex(dialog.thinking.findData("adaptive"))
    dialog.effort.setCurrentIndex(dialog.effort.findData("low"))
    dialog.cache_ttl.setCurrentIndex(dialog.cache_ttl.findData("1h"))
    dialog.show()
    dialog.grab().save(str(tmp_path / "profile.png"))
    dialog._try_accept()
    saved = dialog.profile()
    assert saved is not None
    services.profiles.update(saved)
    stored = services.profiles.get(profile.id)
    assert (stored.thinking, stored.effort, stored.cache_ttl) == ("adaptive", "low", "1h")
    assert request_options(stored) == {"thinking": "adaptive", "thinking_display": None,
                                       "effort": "low", "cache": True, "cache_ttl": "1h"}

    reopened = ProfileDialog(stored, [profile.model])
    qtbot.addWidget(reopened)
    assert reopened.thinking.currentData() == "adaptive"
    assert reopened.effort.currentData() == "low"
    reopened.prompt_cache.setChecked(False)
    assert not reopened.cache_ttl.isEnabled()
    reopened._try_accept()
    assert request_options(reopened.profile())["cache"] is False
