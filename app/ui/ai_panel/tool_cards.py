"""The transcript's tool cards: each by its call's id, the current run's (its footer, "Undo this
run", comes at the run's end), and which footer each card is under; and what the agent's call
events change on a card. The tool card module is imported by the first card (or before it, off
the GUI thread, by app.startup_threads' warm-up): the panel is ready without it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from app.core.outcomes import CardStatus

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from app.core.agent.checkpointing import Checkpointer
    from app.core.agent.events import (
        FilesChanged,
        ReviewArrived,
        ReviewFinished,
        SubAgentUpdated,
        ToolFinished,
        ToolProgress,
        ToolRequested,
    )
    from app.core.services import Services
    from app.ui.ai_panel.read_marks import ReadResourceMarks
    from app.ui.widgets.sub_agent_rows import SubAgentControls
    from app.ui.widgets.tool_card import ToolCard
    from app.ui.widgets.transcript_view import RunFooter


class ToolCards:
    """``by_id``: every card shown; ``this_run``: the current run's; ``footers``: call id →
    the footer of the run it belongs to."""

    def __init__(self, sub_agent_controls: SubAgentControls | None = None,
                 services: Services | None = None,
                 stop: Callable[[], None] | None = None) -> None:
        self.by_id: dict[str, ToolCard] = {}
        self.this_run: list[ToolCard] = []
        self.footers: dict[str, RunFooter] = {}
        # What the sub-agent rows under a card can do (the panel's: it has the session).
        self.sub_agent_controls = sub_agent_controls
        self._services = services
        # The read_resource cards' "changed since read" (made with the first finished call).
        self.read_marks: ReadResourceMarks | None = None
        # What a running card's Cancel does: the panel's Stop (it owns the run).
        self.stop = stop

    def clear(self) -> None:
        if self.read_marks is not None:
            self.read_marks.close()
        self.by_id.clear()
        self.this_run.clear()
        self.footers.clear()

    def forget(self, item: QWidget) -> None:
        """``item`` left the transcript (when it is a card, it is no longer known here)."""
        from app.ui.widgets.tool_card import ToolCard

        if not isinstance(item, ToolCard):
            return
        self.by_id.pop(item.tool_use_id, None)
        self.footers.pop(item.tool_use_id, None)
        if item in self.this_run:
            self.this_run.remove(item)

    def take_run(self) -> list[ToolCard]:
        """The run has ended: its cards (for its footer); the next run starts with none."""
        cards, self.this_run = self.this_run, []
        return cards

    def set_footer(self, footer: RunFooter, cards: list[ToolCard]) -> None:
        for card in cards:
            self.footers[card.tool_use_id] = footer

    # -- the agent's call events ---------------------------------------------------------------

    def request(self, event: ToolRequested) -> ToolCard:
        """The card of a call the model asked for, one of this run's."""
        from app.core.agent.call_audit import decided_by_words
        from app.ui.widgets.tool_card import ToolCard

        decision = event.decision
        # In the words the audit row keeps, so the card reads the same when reloaded.
        card = ToolCard(event.tool_use_id, event.tool_name, event.server_id, event.input,
                        decision.kind, decided_by_words(decision), decided_by=decision.decided_by,
                        has_rule=decision.rule is not None)
        card.cancel_requested.connect(self._cancel)
        self.by_id[event.tool_use_id] = card
        self.this_run.append(card)
        return card

    def _cancel(self) -> None:
        if self.stop is not None:
            self.stop()

    def await_approval(self, tool_use_id: str) -> None:
        card = self.by_id.get(tool_use_id)
        if card is not None:
            card.set_status(CardStatus.AWAITING)

    def start(self, tool_use_id: str) -> None:
        card = self.by_id.get(tool_use_id)
        if card is not None:
            if card.status == CardStatus.AWAITING:
                card.mark_approved()
            card.set_status(CardStatus.RUNNING)

    def progress(self, event: ToolProgress) -> None:
        card = self.by_id.get(event.tool_use_id)
        if card is not None:
            card.set_progress(event.progress, event.total, event.message)

    def finish(self, event: ToolFinished) -> None:
        card = self.by_id.get(event.tool_use_id)
        if card is not None:
            card.finish(event.outcome, event.is_error, event.duration_ms, event.content,
                        event.images, event.for_person)
            if self._services is not None and event.tool_name.endswith("read_resource"):
                if self.read_marks is None:
                    from app.ui.ai_panel.read_marks import ReadResourceMarks

                    self.read_marks = ReadResourceMarks(self._services)
                self.read_marks.watch(card, event.is_error)

    def show_changes(self, event: FilesChanged, checkpointer: Checkpointer | None) -> bool:
        """The call's file changes on its card (and its run's footer, when the run has ended,
        as a stopped call's may); False when the card is not shown."""
        card = self.by_id.get(event.tool_use_id)
        if card is None:
            return False
        card.set_changes(event.changes, checkpointer)
        footer = self.footers.get(event.tool_use_id)
        if footer is not None:
            footer.refresh()
        return True

    def sub_agent(self, event: SubAgentUpdated) -> None:
        """A sub-agent the call started moved on: its row under the call's card."""
        card = self.by_id.get(event.parent_call_id)
        if card is not None:
            card.show_sub_agent(event, self.sub_agent_controls)

    def review(self, event: ReviewArrived | ReviewFinished) -> None:
        card = self.by_id.get(event.tool_use_id)
        if card is not None:
            card.handle_review_event(event)
