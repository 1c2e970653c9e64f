"""The AI panel's header: one-time notices, the first-run choice of a permission mode, the flow
chip with the project's trust, and the usage line under the transcript.

A mixin of ``AIPanel`` (app.ui.widgets.ai_panel), apart from the run and the conversations
because none of it drives them: it shows the state of the profile, the conversation's flow
labels and its tokens, and takes the person's choices about them (mode, reset, trust). The
notice bar, the mode panel, the price table and the flow labels' module are imported when
first shown (the panel is ready without them).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, SignalInstance
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout

from app.core.permission_mode import PermissionMode
from app.core.settings_fields import PERMISSION_MODE_CHOSEN
from app.ui.widgets.flow_chip import FlowChip

# The first-run mode panel comes this long after the panel is first shown, so after its first
# paint: typing and Send do not need it, and building it (word-wrapped labels, a bold face, a
# style sheet) was ~8 ms of the window's start to ready (tests/bench/bench_ui_responsiveness.py).
MODE_INTRO_DELAY_MS = 30

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from app.core.agent.session import AgentSession
    from app.core.pricing import Usage
    from app.core.services import Services
    from app.ui.widgets.mode_intro import ModeIntro
    from app.ui.widgets.notice_bar import Notices

    _Base = QWidget
else:
    _Base = object


class PanelHeader(_Base):
    """Mixin of AIPanel (see the module docstring)."""

    services: Services
    profile_id: int
    session: AgentSession | None
    status_message: SignalInstance
    permission_mode_changed: SignalInstance
    _project_root: Callable[[], Path | None]

    if TYPE_CHECKING:
        @property
        def running(self) -> bool: ...

    def _build_header(self, row: QHBoxLayout) -> None:
        """The flow chip at the end of ``row`` (the conversation row), the usage line and the
        banners' layout (placed by the panel)."""
        self.flow_chip = FlowChip()
        row.addWidget(self.flow_chip)
        self.flow_chip.reset_requested.connect(self.reset_flow)
        self.flow_chip.trust_toggled.connect(self.set_project_trusted)
        # The project folder may have changed since: read its trust when the menu opens.
        self.flow_chip.menu_.aboutToShow.connect(self._show_trust)
        # Tokens and cost of the last turn and of the conversation (UsageUpdated).
        self.usage_label = QLabel("")
        self.usage_label.setObjectName("usage")
        self.usage_label.setStyleSheet("QLabel { color: palette(placeholder-text); }")
        self.usage_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Notices and the first-run mode choice, above the conversation row.
        self.banners = QVBoxLayout()
        self.banners.setSpacing(6)
        self.notices: Notices | None = None
        self.mode_intro: ModeIntro | None = None
        # True once the panel has looked whether the first-run mode panel is wanted.
        self.mode_intro_checked = False
        self._mode_chosen = False  # here, since the panel was built
        self._mode_intro_planned = False  # on the first show
        self._notices_taken = False

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._notices_taken:
            self.show_notices()
        if not self._mode_intro_planned:
            self._mode_intro_planned = True
            self._show_mode_intro_soon()

    # -- notices and the permission mode ------------------------------------------------------

    def show_notices(self) -> None:
        """The services' one-time notices, once, as dismissible bars (never a modal box)."""
        self._notices_taken = True
        notices = self.services.take_notices()
        if not notices:
            return
        if self.notices is None:
            from app.ui.widgets.notice_bar import Notices

            self.notices = Notices()
            self.banners.insertWidget(0, self.notices)
        for text in notices:
            self.notices.add(text)

    def _show_mode_intro_soon(self) -> None:
        # Decided now, built after the first paint: the timer reads nothing from the store,
        # which may be closed by then (a quit right after the start).
        if self.services.settings.read(PERMISSION_MODE_CHOSEN):
            self.mode_intro_checked = True
            return
        mode = self._profile_mode()
        QTimer.singleShot(MODE_INTRO_DELAY_MS, self, lambda: self._show_mode_intro(mode))

    def _show_mode_intro(self, mode: PermissionMode) -> None:
        self.mode_intro_checked = True
        if self.mode_intro is not None or self._mode_chosen:  # chosen in the toolbar meanwhile
            return
        from app.ui.widgets.mode_intro import ModeIntro

        self.mode_intro = ModeIntro(mode)
        self.mode_intro.chosen.connect(self.choose_permission_mode)
        self.banners.addWidget(self.mode_intro)

    def _profile_mode(self) -> PermissionMode:
        try:
            return self.services.profiles.get(self.profile_id).permission_mode
        except KeyError:  # the profile is gone (deleted meanwhile)
            return PermissionMode.ASK

    def choose_permission_mode(self, value: str) -> None:
        """Save ``value`` as the current profile's mode (read at the start of each run) and
        remember that the person has chosen (the first-run panel goes away)."""
        mode = PermissionMode.parse(value)
        self.services.profiles.set_permission_mode(self.profile_id, mode)
        self.permission_mode_chosen()
        self.permission_mode_changed.emit(mode.value)
        self.status_message.emit(f"Permission mode: {mode.label}" + (
            " (applies from the next message)" if self.running else ""))

    def permission_mode_chosen(self) -> None:
        """The person chose a mode (here or in the toolbar): no first-run panel any more."""
        self._mode_chosen = True
        self.services.settings.write(PERMISSION_MODE_CHOSEN, True)
        if self.mode_intro is not None:
            self.mode_intro.hide()
            self.mode_intro.deleteLater()
            self.mode_intro = None

    def show_permission_mode(self) -> None:
        """The profile changed: the first-run panel preselects its mode."""
        if self.mode_intro is not None:
            self.mode_intro.select(self._profile_mode())

    # -- usage -------------------------------------------------------------------------------

    def show_usage(self, model: str, turn: Usage | None, conversation: dict[str, Usage],
                   cache_ttl: str = "5m") -> None:
        """"Last turn: … · Conversation: …" with the cost from the price table (Settings →
        Usage & prices); empty for a conversation without turns."""
        if not conversation:  # before the imports: a new conversation at start-up
            self.usage_label.setText("")
            return
        from app.core.pricing import Usage, cost, prices_from_setting
        from app.core.settings_fields import PRICES
        from app.ui.dialogs.usage_settings import format_usage

        table = prices_from_setting(self.services.settings.read(PRICES))
        total, dollars = Usage(), 0.0
        priced = True
        for name, usage in conversation.items():
            total = total + usage
            spent = cost(name, usage, table, cache_ttl=cache_ttl)
            priced = priced and spent is not None
            dollars += spent or 0.0
        parts = []
        if turn is not None:
            parts.append("Last turn: " + format_usage(turn, cost(model, turn, table,
                                                                 cache_ttl=cache_ttl)))
        parts.append("Conversation: " + format_usage(total, dollars if priced else None))
        self.usage_label.setText("   ·   ".join(parts))

    def _show_conversation_usage(self) -> None:
        session = self.session
        self.show_usage("", None, session.conversation_usage() if session is not None else {})

    # -- flow labels -------------------------------------------------------------------------

    def _show_flow(self) -> None:
        """The chip shows the current conversation's labels (clean before its first run), and
        the usage line its tokens."""
        self._show_conversation_usage()
        if self.session is None:
            self.flow_chip.set_flow("clean", (), resettable=False)
        else:
            flow = self.session.flow  # read from the conversation on first use
            self.flow_chip.set_flow(flow.summary(), flow.sources)
        self._show_trust()

    def _show_trust(self) -> None:
        root = self._project_root()
        self.flow_chip.set_trust(None if root is None else (root.name or str(root)),
                                 root is not None and self.services.is_trusted(root))

    def reset_flow(self) -> None:
        """The chip's "Reset labels for this conversation"."""
        if self.session is None:
            return
        self.session.reset_flow()  # announces FlowChanged (and saves the empty labels)
        self._show_flow()
        self.status_message.emit("Flow labels reset for this conversation.")

    def set_project_trusted(self, trusted: bool) -> None:
        """The chip's "Trust this project folder": for the sessions created from now on (a
        new or reopened conversation), not the current one."""
        root = self._project_root()
        if root is None:
            return
        self.services.set_trusted(root, trusted)
        self._show_trust()
        name = root.name or str(root)
        self.status_message.emit(
            (f"{name} is now trusted" if trusted else f"{name} is no longer trusted") +
            ": applies to conversations started or reopened from now on.")
