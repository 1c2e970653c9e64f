"""An apply from Review changes, kept in a conversation's history like a tool call's change set:
an audit row (``tool_executions``) whose ``changes`` are the checkpoints around the apply, so
the conversation lists "Applied N files from tebiki/<id>" with Diff / Undo, also after a
restart (the replay rebuilds it from the row and the project's shadow repository).

Which conversation owns it: the one that started the run. For File → New Conversation in a
Worktree that is the conversation that ran in the workspace (``RunWorkspace.conversation_id``):
it is shown when the person presses Review changes, the apply is the end of its work, and it
came from no other conversation. For a sub-agent's workspace it is the parent's conversation
(the child's transcript is a detail the person rarely opens; the parent's is where they review
from the sub-agent's row, and it works in the project the apply changes). The card is undone
with the *project's* checkpointer (the row names the project: ``changes["project"]``),
whatever folder the owning conversation itself works in.

The row is not a message: the model never sees a call it did not make.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.agent.checkpointing import CallChanges
from app.core.outcomes import Outcome
from app.core.store.audit import AuditRepository, ToolExecution
from app.core.store.conversations import ConversationRepository, StoredMessage

APPLY_SERVER = "worktree"  # the audit rows of applies: no tool has this server id
APPLIED_BY = "you applied it from Review changes"


def apply_id() -> str:
    """The id of one apply (its checkpoints' label, its card's and audit row's tool_use_id)."""
    return "apply-" + secrets.token_hex(6)


def apply_title(count: int, branch: str) -> str:
    return f"Applied {count} file{'s' if count != 1 else ''} from {branch}"


@dataclass(frozen=True)
class AppliedRecord:
    conversation_id: int  # whose history holds it
    tool_use_id: str
    title: str
    summary: str


def record_apply(audit: AuditRepository, conversations: ConversationRepository,
                 conversation_id: int, project: Path, branch: str, paths: list[str],
                 changes: CallChanges) -> AppliedRecord:
    """Write the apply's audit row into the history of the conversation that started the run
    (``conversation_id`` ran in the workspace; a sub-agent's belongs to its parent), after its
    last message, where the replay shows it. Blocking: the database."""
    conversation_id = conversations.parent_of(conversation_id) or conversation_id
    last = conversations.last_message(conversation_id)
    title = apply_title(len(paths), branch)
    summary = f"{title} into {project}: {', '.join(paths)}"
    row = audit.record(
        tool_name=title, server_id=APPLY_SERVER,
        tool_input={"branch": branch, "files": paths, "project": str(project),
                    "after_message": last.id if last is not None else 0},
        decision="allow", outcome=Outcome.EXECUTED, output=summary,
        conversation_id=conversation_id, tool_use_id=changes.tool_use_id,
        decided_by=APPLIED_BY)
    audit.set_changes(row, {**changes.to_json(), "project": str(project)})
    return AppliedRecord(conversation_id, changes.tool_use_id, title, summary)


def is_apply(execution: ToolExecution) -> bool:
    return execution.server_id == APPLY_SERVER


def changes_project(execution: ToolExecution) -> Path | None:
    """The project an apply's change set belongs to (None: a call's, in its conversation's)."""
    changes: Any = execution.changes
    project = changes.get("project") if isinstance(changes, dict) else None
    return Path(project) if isinstance(project, str) and project else None


def applies_after(messages: list[StoredMessage], executions: dict[str, ToolExecution], *,
                  shown_from: int = 0) -> dict[int, list[ToolExecution]]:
    """The applies to show after each message (by message id; 0: before the first, only when
    the messages are shown from the first, ``shown_from`` 0), in the order they were made. One
    recorded after a message that is gone since (edited and resent) follows the last message
    before it."""
    ids = [m.id for m in messages]
    out: dict[int, list[ToolExecution]] = {}
    for execution in sorted((e for e in executions.values() if is_apply(e)),
                            key=lambda e: e.id):
        after = execution.input.get("after_message") if isinstance(execution.input, dict) \
            else None
        anchor = max((i for i in ids if isinstance(after, int) and i <= after), default=0)
        out.setdefault(anchor, []).append(execution)
    if shown_from > 0:
        out.pop(0, None)
    return out
