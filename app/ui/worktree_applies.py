"""The project's side of Review changes (app.ui.dialogs.review_changes): an apply is a change
set of the project's checkpoints, kept in the history of the conversation that started the
run (app.core.worktrees.apply_record says which and why) and shown there as a card, so the
conversation's own Undo takes it back — also after a restart. The dialog's Undo apply is that
same undo: the card's when the conversation is shown, else the checkpoint controller's, with
the same preview. Conflicts are asked through the panel's checkpoint controller too (its
restore merge UI, answered by tests through ``answer_preview``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.ui.widgets.apply_card import apply_card
from app.ui.widgets.tool_card import ToolCard

if TYPE_CHECKING:
    from app.core.agent.checkpointing import CallChanges, Checkpointer
    from app.core.services import Services
    from app.core.worktrees.workspace import RunWorkspace
    from app.ui.ai_panel.panel import AIPanel
    from app.ui.dialogs.restore_preview import RestorePreviewDialog


class ProjectApplies:
    """``owner(workspace)``: the conversation that ran in it (None: none yet, the apply is
    then only in the dialog's Undo)."""

    def __init__(self, panel: AIPanel, services: Services,
                 owner: Callable[[RunWorkspace], int | None]) -> None:
        self._panel = panel
        self._services = services
        self._owner = owner

    def checkpointer(self, workspace: RunWorkspace) -> Checkpointer | None:
        return self._services.checkpointer_for(workspace.source)

    async def ask(self, dialog: RestorePreviewDialog) -> bool:
        return await self._panel.checkpoints.ask(dialog)

    async def recorded(self, workspace: RunWorkspace, paths: list[str],
                       changes: CallChanges) -> None:
        """Keep the apply in its conversation's history; its card, when that is shown."""
        from app.core.worktrees.apply_record import record_apply

        conversation_id = self._owner(workspace)
        if conversation_id is None or not changes.changes:
            return
        services = self._services
        record = await asyncio.to_thread(
            record_apply, services.audit, services.conversations, conversation_id,
            workspace.source, workspace.branch, paths, changes)
        session = self._panel.session
        if session is None or session.conversation_id != record.conversation_id:
            return
        card = apply_card(record.tool_use_id, record.title,
                          {"branch": workspace.branch, "files": paths}, record.summary)
        self._panel.transcript.add(card)
        self._panel.undo.connect_card(card)
        card.set_changes(changes, self.checkpointer(workspace))
        self._panel.undo.after_restore()

    async def undo(self, workspace: RunWorkspace, changes: CallChanges) -> bool:
        """Undo the apply ``changes`` as its card would (preview, conflicts kept as the person
        says); whether it was undone."""
        card = self._card(changes.tool_use_id)
        if card is not None:
            task = self._panel.undo.undo_cards([card], "the apply")
            if task is not None:
                await task
            return card.undone
        checkpointer = self.checkpointer(workspace)
        if checkpointer is None:
            return False
        return await self._panel.checkpoints.undo(checkpointer, [changes], "the apply") \
            is not None

    def _card(self, tool_use_id: str) -> ToolCard | None:
        return next((w for w in self._panel.transcript.items()
                     if isinstance(w, ToolCard) and w.tool_use_id == tool_use_id), None)
