"""The AI panel's undo actions: "Undo this call" on a card, "Undo this run" on a run's footer,
"Restore to before this message" on a prompt, and their redo — each through the checkpoint
controller, which plans, previews and applies off the GUI thread."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from app.ui.controllers.checkpoints import CheckpointController, made_a_commit
from app.ui.widgets.transcript_view import MessageView, RunFooter, Transcript

if TYPE_CHECKING:
    import asyncio  # imported where used: the ready window loads before the event loop

    from app.core.agent.checkpointing import Checkpointer, UndoRecord
    from app.ui.ai_panel.ports import RunState, Status
    from app.ui.ai_panel.tool_cards import ToolCards
    from app.ui.widgets.tool_card import ToolCard  # imported by its first use: see ToolCards


class UndoActions:
    """Connects cards and footers to the checkpoint controller; refuses while a run goes."""

    def __init__(self, transcript: Transcript, cards: ToolCards,
                 checkpoints: CheckpointController, runs: RunState, status: Status) -> None:
        self._transcript = transcript
        self._cards = cards
        self._checkpoints = checkpoints
        self._runs = runs
        self._status = status
        checkpoints.busy_changed.connect(self._on_checkpoints_busy)

    def connect_card(self, card: ToolCard) -> None:
        card.diff_requested.connect(lambda c=card: self.show_changes(c))
        card.undo_requested.connect(lambda c=card: self.undo_cards([c], "this call"))
        card.redo_requested.connect(lambda c=card: self.redo(c.undo_record, "this call"))

    def end_run(self) -> None:
        """The run's output is complete: its footer ("Undo this run") goes at its end."""
        cards = self._cards.take_run()
        if not cards:
            return
        footer = RunFooter()
        self._connect_footer(footer)
        self._transcript.add(footer)
        for card in cards:
            footer.add_card(card)
        self._cards.set_footer(footer, cards)

    def adopt(self, cards: dict[str, ToolCard], footers: list[RunFooter]) -> None:
        """Cards and footers replayed from the store: connected as the run's own were."""
        for card in cards.values():
            self.connect_card(card)
        for footer in footers:
            self._connect_footer(footer)
            self._cards.set_footer(footer, footer.cards)
        self.refresh_restore_actions()

    def _connect_footer(self, footer: RunFooter) -> None:
        footer.undo_requested.connect(
            lambda f=footer: self.undo_cards(f.changed_cards(), "this run", f))
        footer.redo_requested.connect(lambda f=footer: self.redo(f.undo_record, "this run"))

    def _all_cards(self) -> list[ToolCard]:
        from app.ui.widgets.tool_card import ToolCard

        return [w for w in self._transcript.items() if isinstance(w, ToolCard)]

    def _all_footers(self) -> list[RunFooter]:
        return [w for w in self._transcript.items() if isinstance(w, RunFooter)]

    def refresh_restore_actions(self) -> None:
        """"Restore to before this message" on each prompt followed by undoable changes."""
        from app.ui.widgets.tool_card import ToolCard

        later_changes = False
        for item in reversed(self._transcript.items()):
            if isinstance(item, ToolCard) and item.has_changes and not item.undone:
                later_changes = True
            elif isinstance(item, MessageView) and item.role == "user":
                item.set_restore_action(
                    functools.partial(self.restore_to_message, item) if later_changes else None)

    def show_changes(self, card: ToolCard) -> asyncio.Future[object] | None:
        if card.changes is None or card.checkpointer is None:
            return None
        return self._checkpoints.start(self._checkpoints.show_diff(
            card.checkpointer, [card.changes], f"Changes by {card.tool_name}"))

    def restore_to_message(self, message: MessageView) -> asyncio.Future[object] | None:
        """Undo every call with changes after ``message``, in order."""
        items = self._transcript.items()
        if message not in items:
            return None
        after = items[items.index(message) + 1:]
        from app.ui.widgets.tool_card import ToolCard

        cards = [w for w in after if isinstance(w, ToolCard)]
        return self.undo_cards(cards, "everything since this message")

    def undo_cards(self, cards: list[ToolCard], what: str,
                   footer: RunFooter | None = None) -> asyncio.Future[object] | None:
        if self._runs.running:
            self._status("Stop or wait for the run to finish before undoing.")
            return None
        return self._checkpoints.start(self._undo(cards, what, footer))

    def redo(self, record: UndoRecord | None, what: str) -> asyncio.Future[object] | None:
        if record is None:
            return None
        if self._runs.running:
            self._status("Stop or wait for the run to finish before redoing.")
            return None
        return self._checkpoints.start(self._redo(record, what))

    async def _undo(self, cards: list[ToolCard], what: str, footer: RunFooter | None) -> None:
        cards = [c for c in cards if c.has_changes and not c.undone]
        if not cards:
            self._status("Nothing to undo.")
            return
        checkpointer: Checkpointer | None = cards[0].checkpointer
        cards = [c for c in cards if c.checkpointer is checkpointer]
        if checkpointer is None:
            return
        commit = any(made_a_commit(c.tool_name, c.tool_input) for c in cards)
        record = await self._checkpoints.undo(
            checkpointer, [c.changes for c in cards if c.changes is not None], what,
            commit=commit)
        if record is None:
            return
        for card in cards:
            card.set_undone(record)
        if footer is not None:
            footer.set_undone(record)
        self.after_restore()

    async def _redo(self, record: UndoRecord, what: str) -> None:
        cards = [c for c in self._all_cards() if c.undo_record is record]
        checkpointer = cards[0].checkpointer if cards else None
        if checkpointer is None:
            return
        if await self._checkpoints.redo(checkpointer, record, what) is None:
            return
        for card in cards:
            card.set_redone()
        for footer in self._all_footers():
            if footer.undo_record is record:
                footer.set_undone(None)
        self.after_restore()

    def after_restore(self) -> None:
        """Files changed back or forth: every footer and prompt shows what is left to undo."""
        for footer in self._all_footers():
            footer.refresh()
        self.refresh_restore_actions()

    def _on_checkpoints_busy(self, busy: bool) -> None:
        for card in self._all_cards():
            card.set_actions_enabled(not busy)
        for footer in self._all_footers():
            footer.set_actions_enabled(not busy)
