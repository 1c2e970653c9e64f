"""The "Orchestration" choice above the tools: shows the profile's, saves a change at once, and
the sub-agent tools are never listed as tools of their own."""

from __future__ import annotations

from app.core.orchestration_mode import Orchestration


def test_the_choice_is_the_profiles_and_saves(qtbot, services) -> None:  # type: ignore[no-untyped-def]
    from app.ui.widgets.tools_panel import ToolsPanel

    profile = services.profiles.ensure_default()
    panel = ToolsPanel(services, profile.id)
    qtbot.addWidget(panel)
    combo = panel.orchestration.combo
    assert combo.accessibleName() == "Orchestration"
    assert combo.currentData() == Orchestration.NONE.value
    combo.setCurrentIndex(combo.findData(Orchestration.APPROVAL.value))
    assert services.profiles.get(profile.id).orchestration is Orchestration.APPROVAL
    listed = {panel.tree.topLevelItem(i).child(j).text(0)
              for i in range(panel.tree.topLevelItemCount())
              for j in range(panel.tree.topLevelItem(i).childCount())}
    assert listed and not listed & {"create_sub_agent", "execute_sub_agent",
                                    "get_sub_agent_result", "cancel_sub_agent"}
    services.profiles.set_orchestration(profile.id, Orchestration.SUB_AGENTS)
    panel.set_profile(profile.id)
    assert combo.currentData() == Orchestration.SUB_AGENTS.value
