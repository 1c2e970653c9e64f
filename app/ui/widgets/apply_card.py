"""The card of an apply from Review changes in a conversation's transcript ("Applied 3 files
from tebiki/<id>", app.core.worktrees.apply_record): a tool card without a call, so its Diff,
Undo and Redo are the ones every change set of the project has."""

from __future__ import annotations

from typing import Any

from app.core.outcomes import Outcome
from app.core.worktrees.apply_record import APPLIED_BY, APPLY_SERVER
from app.ui.widgets.tool_card import ToolCard


def apply_card(tool_use_id: str, title: str, tool_input: Any, summary: str) -> ToolCard:
    card = ToolCard(tool_use_id, title, APPLY_SERVER, tool_input, "allow", APPLIED_BY,
                    decided_by=APPLIED_BY)
    card.finish(Outcome.EXECUTED, False, 0, summary)
    card.mark_approved()  # the person's own act: "approved by you", not a rule's
    return card
