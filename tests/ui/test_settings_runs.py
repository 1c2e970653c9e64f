"""Settings → Sub-agents & runs: the limits of sub-agents and of conversations running at once,
shown from the store and saved back."""

from __future__ import annotations

from app.core.settings_fields import PARALLEL_RUNS, SUB_AGENT_TIME_LIMIT, SUB_AGENTS_AT_ONCE


def test_the_limits_round_trip(qtbot, services) -> None:  # type: ignore[no-untyped-def]
    from app.ui.dialogs.settings import SettingsDialog

    profile = services.profiles.ensure_default()
    dialog = SettingsDialog(services, profile.id)
    qtbot.addWidget(dialog)
    form = dialog.runs_form
    assert form.input(SUB_AGENTS_AT_ONCE).value() == 4
    assert form.input(SUB_AGENT_TIME_LIMIT).value() == 600
    form.input(SUB_AGENTS_AT_ONCE).setValue(2)
    form.input(PARALLEL_RUNS).setValue(3)
    assert form.save()
    assert services.settings.read(SUB_AGENTS_AT_ONCE) == 2
    assert services.settings.read(PARALLEL_RUNS) == 3
