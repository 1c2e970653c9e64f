"""The first-run choice of a permission mode, at the top of the AI panel, and the choice itself
(here or in the toolbar's Mode picker): saved to the current profile, read at the start of each
run. The mode panel is imported when first shown (the panel is ready without it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from app.core.permission_mode import PermissionMode
from app.core.settings_fields import PERMISSION_MODE_CHOSEN

if TYPE_CHECKING:
    from app.core.services import Services
    from app.ui.ai_panel.mode_intro import ModeIntro
    from app.ui.ai_panel.ports import RunState, Status
    from app.ui.ai_panel.widget_slot import WidgetSlot

# The first-run mode panel comes this long after the panel is first shown, so after its first
# paint: typing and Send do not need it, and building it (word-wrapped labels, a bold face, a
# style sheet) was ~8 ms of the window's start to ready (tests/bench/bench_ui_responsiveness.py).
MODE_INTRO_DELAY_MS = 30


class ModeChoice:
    """``mode_intro``: the first-run panel while it is shown; ``intro_checked`` once the panel
    has looked whether it is wanted."""

    def __init__(self, services: Services, profile_id: Callable[[], int], banners: WidgetSlot,
                 runs: RunState, status: Status, changed: Callable[[str], None]) -> None:
        self._services = services
        self._profile_id = profile_id
        self._banners = banners
        self._runs = runs
        self._status = status
        self._changed = changed
        self.mode_intro: ModeIntro | None = None
        self.intro_checked = False
        self._chosen = False  # here, since the panel was built

    def intro_wanted(self) -> PermissionMode | None:
        """The mode the first-run panel would preselect, or None when a mode was chosen.
        Decided at the first show, built after the first paint (``show_intro``): the store
        may be closed by then (a quit right after the start)."""
        if self._services.settings.read(PERMISSION_MODE_CHOSEN):
            self.intro_checked = True
            return None
        return self._profile_mode()

    def show_intro(self, mode: PermissionMode) -> None:
        self.intro_checked = True
        if self.mode_intro is not None or self._chosen:  # chosen in the toolbar meanwhile
            return
        from app.ui.ai_panel.mode_intro import ModeIntro

        self.mode_intro = ModeIntro(mode)
        self.mode_intro.chosen.connect(self.choose)
        self._banners.add(self.mode_intro)

    def _profile_mode(self) -> PermissionMode:
        try:
            return self._services.profiles.get(self._profile_id()).permission_mode
        except KeyError:  # the profile is gone (deleted meanwhile)
            return PermissionMode.ASK

    def choose(self, value: str) -> None:
        """Save ``value`` as the current profile's mode (read at the start of each run) and
        remember that the person has chosen (the first-run panel goes away)."""
        mode = PermissionMode.parse(value)
        self._services.profiles.set_permission_mode(self._profile_id(), mode)
        self.mark_chosen()
        self._changed(mode.value)
        self._status(f"Permission mode: {mode.label}" + (
            " (applies from the next message)" if self._runs.running else ""))

    def mark_chosen(self) -> None:
        """The person chose a mode (here or in the toolbar): no first-run panel any more."""
        self._chosen = True
        self._services.settings.write(PERMISSION_MODE_CHOSEN, True)
        if self.mode_intro is not None:
            self.mode_intro.hide()
            self.mode_intro.deleteLater()
            self.mode_intro = None

    def show_profile_mode(self) -> None:
        """The profile changed: the first-run panel preselects its mode."""
        if self.mode_intro is not None:
            self.mode_intro.select(self._profile_mode())
