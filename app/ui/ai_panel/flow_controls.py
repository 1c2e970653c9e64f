"""The flow chip at the end of the conversation row: the open conversation's flow labels, with
"Reset labels for this conversation", and the project folder's trust, with "Trust this project
folder". The flow labels' module is imported by the first conversation that has some."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from app.ui.ai_panel.flow_chip import FlowChip

if TYPE_CHECKING:
    from app.core.permissions.flow import FlowSource
    from app.core.services import Services
    from app.ui.ai_panel.ports import SessionSource, Status


class FlowControls:
    """``chip``: the flow chip, placed by the panel; its menu's actions act here."""

    def __init__(self, services: Services, sessions: SessionSource,
                 project_root: Callable[[], Path | None], status: Status) -> None:
        self._services = services
        self._sessions = sessions
        self._project_root = project_root
        self._status = status
        self.chip = FlowChip()
        self.chip.reset_requested.connect(self.reset_flow)
        self.chip.trust_toggled.connect(self.set_project_trusted)
        # The project folder may have changed since: read its trust when the menu opens.
        self.chip.menu_.aboutToShow.connect(self.show_trust)

    def show_flow(self) -> None:
        """The current conversation's labels (clean before its first run) and the trust."""
        session = self._sessions.session
        if session is None:
            self.chip.set_flow("clean", (), resettable=False)
        else:
            flow = session.flow  # read from the conversation on first use
            self.chip.set_flow(flow.summary(), flow.sources)
        self.show_trust()

    def set_flow(self, summary: str, sources: Iterable[FlowSource]) -> None:
        """The run's labels changed (FlowChanged)."""
        self.chip.set_flow(summary, sources)

    def show_trust(self) -> None:
        root = self._project_root()
        self.chip.set_trust(None if root is None else (root.name or str(root)),
                            root is not None and self._services.is_trusted(root))

    def reset_flow(self) -> None:
        """The chip's "Reset labels for this conversation"."""
        session = self._sessions.session
        if session is None:
            return
        session.reset_flow()  # announces FlowChanged (and saves the empty labels)
        self.show_flow()
        self._status("Flow labels reset for this conversation.")

    def set_project_trusted(self, trusted: bool) -> None:
        """The chip's "Trust this project folder": for the sessions created from now on (a
        new or reopened conversation), not the current one."""
        root = self._project_root()
        if root is None:
            return
        self._services.set_trusted(root, trusted)
        self.show_trust()
        name = root.name or str(root)
        self._status(
            (f"{name} is now trusted" if trusted else f"{name} is no longer trusted") +
            ": applies to conversations started or reopened from now on.")
