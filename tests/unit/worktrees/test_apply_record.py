"""An apply from Review changes as a change set of the project: what it writes as the person
resolved each conflict (their merged text, keep mine, take the run's), and the audit row that
keeps it in the conversation's history — shown after the message it followed, even when that
message is gone since, and naming the project whose checkpoints undo it."""

from __future__ import annotations

from pathlib import Path

from app.core.agent.checkpointing import Checkpointer
from app.core.store.audit import AuditRepository
from app.core.store.conversations import ConversationRepository
from app.core.worktrees.apply import ApplyItem, apply, written
from app.core.worktrees.apply_record import (
    APPLY_SERVER,
    applies_after,
    apply_id,
    changes_project,
    record_apply,
)

BOTH = ApplyItem("both.txt", b"base\n", b"mine\n", b"theirs\n")  # changed on both sides
NEW = ApplyItem("new.txt", None, None, b"new\n")
GONE = ApplyItem("gone.txt", b"gone\n", b"gone\n", None)


def test_what_is_written_follows_the_resolutions() -> None:
    assert BOTH.conflict and not NEW.conflict and not GONE.conflict
    assert written([BOTH, NEW, GONE], {}) == ["new.txt", "gone.txt"]  # unresolved: kept
    assert written([BOTH, NEW], {"both.txt": "mine"}) == ["new.txt"]
    assert written([BOTH], {"both.txt": "merge"}) == ["both.txt"]


async def test_the_merged_text_the_person_edited_is_what_is_written(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "both.txt").write_bytes(b"mine\n")
    (project / "gone.txt").write_bytes(b"gone\n")
    checkpointer = Checkpointer(tmp_path / "data", project)
    label = apply_id()
    changes = await apply(project, [BOTH, NEW, GONE], {"both.txt": "merge"}, checkpointer,
                          label, {"both.txt": b"edited by the person\n"})
    assert (project / "both.txt").read_bytes() == b"edited by the person\n"
    assert (project / "new.txt").read_bytes() == b"new\n"
    assert not (project / "gone.txt").exists()
    assert changes is not None and changes.tool_use_id == label
    assert sorted(changes.paths) == ["both.txt", "gone.txt", "new.txt"]


async def test_the_record_keeps_the_apply_after_its_message(tmp_path: Path, db) -> None:
    project = tmp_path / "project"
    project.mkdir()
    checkpointer = Checkpointer(tmp_path / "data", project)
    changes = await apply(project, [NEW], {}, checkpointer, apply_id())
    assert changes is not None
    conversations, audit = ConversationRepository(db), AuditRepository(db)
    conversation = conversations.create(title="run", agent_id=None, project_root=None)
    first = conversations.append(conversation.id, "user", "write it")
    second = conversations.append(conversation.id, "assistant", "done")
    record = record_apply(audit, conversations, conversation.id, project, "tebiki/x",
                          ["new.txt"], changes)
    assert record.title == "Applied 1 file from tebiki/x"
    rows = audit.for_conversation(conversation.id)
    row = rows[changes.tool_use_id]
    assert row.server_id == APPLY_SERVER and row.tool_name == record.title
    assert changes_project(row) == project
    assert row.changes["after"] == changes.after.id
    messages = conversations.messages(conversation.id)
    assert applies_after(messages, rows) == {second: [row]}
    assert applies_after(messages[:1], rows) == {first: [row]}  # "done" deleted since
    assert applies_after(messages, rows, shown_from=1) == {second: [row]}
    assert applies_after([], rows) == {0: [row]}
    assert applies_after([], rows, shown_from=1) == {}


async def test_a_sub_agents_apply_goes_into_its_parents_history(tmp_path: Path, db) -> None:
    project = tmp_path / "project"
    project.mkdir()
    changes = await apply(project, [NEW], {}, Checkpointer(tmp_path / "data", project),
                          apply_id())
    assert changes is not None
    conversations, audit = ConversationRepository(db), AuditRepository(db)
    parent = conversations.create(title="parent", agent_id=None, project_root=str(project))
    child = conversations.create(title="child", agent_id=None, parent_id=parent.id)
    record = record_apply(audit, conversations, child.id, project, "tebiki/x", ["new.txt"],
                          changes)
    assert record.conversation_id == parent.id
    assert changes.tool_use_id in audit.for_conversation(parent.id)
    assert audit.for_conversation(child.id) == {}
