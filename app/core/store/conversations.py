"""Conversations and their messages (Anthropic content blocks stored as JSON)."""

from __future__ import annotations

import builtins
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from app.core.store.db import fts_match, store_of, utc_now
from app.core.store.search_text import searchable_text

if TYPE_CHECKING:  # only annotations name the store
    from app.core.pricing import Usage
    from app.core.store.db import Database

Role = Literal["user", "assistant"]


@dataclass(frozen=True)
class Conversation:
    id: int
    title: str
    agent_id: int | None
    project_root: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class StoredMessage:
    id: int
    role: Role
    content: list[dict[str, Any]] | str


class ConversationRepository:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.store = store_of(db)

    def create(self, *, title: str = "", agent_id: int | None = None,
               project_root: str | None = None, parent_id: int | None = None) -> Conversation:
        """A new conversation; ``parent_id``: a sub-agent's, kept with (and deleted with) the
        conversation that started it and out of the conversation lists."""
        now = utc_now()
        with self.store.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO conversations (agent_id, title, project_root, parent_id,"
                " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                (agent_id, title, project_root, parent_id, now, now))
        assert cur.lastrowid is not None  # set by every successful INSERT
        return Conversation(cur.lastrowid, title, agent_id, project_root, now, now)

    def get(self, conversation_id: int) -> Conversation:
        with self.store.lock:
            row = self.db.conn.execute(
                "SELECT id, title, agent_id, project_root, created_at, updated_at"
                " FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
        if row is None:
            raise KeyError(conversation_id)
        return Conversation(*row)

    def list(self, limit: int = 200) -> list[Conversation]:
        with self.store.lock:
            rows = self.db.conn.execute(
                "SELECT id, title, agent_id, project_root, created_at, updated_at"
                " FROM conversations WHERE parent_id IS NULL"
                " ORDER BY updated_at DESC, id DESC LIMIT ?",
                (limit,)).fetchall()
        return [Conversation(*r) for r in rows]

    def list_for_project(self, project_root: str,
                         limit: int = 200) -> builtins.list[Conversation]:
        """The conversations held in ``project_root``, most recently updated first."""
        with self.store.lock:
            rows = self.db.conn.execute(
                "SELECT id, title, agent_id, project_root, created_at, updated_at"
                " FROM conversations WHERE project_root = ? AND parent_id IS NULL"
                " ORDER BY updated_at DESC, id DESC LIMIT ?", (project_root, limit)).fetchall()
        return [Conversation(*r) for r in rows]

    def parent_of(self, conversation_id: int) -> int | None:
        """The conversation a sub-agent's conversation belongs to (None: a top-level one)."""
        with self.store.lock:
            row = self.db.conn.execute("SELECT parent_id FROM conversations WHERE id = ?",
                                       (conversation_id,)).fetchone()
        return row[0] if row else None

    def rename(self, conversation_id: int, title: str) -> None:
        with self.store.transaction() as conn:
            conn.execute("UPDATE conversations SET title = ?, updated_at = ? WHERE id = ?",
                         (title, utc_now(), conversation_id))

    def flow(self, conversation_id: int) -> dict[str, Any] | None:
        """The conversation's flow labels as stored (app.core.permissions.flow), or None."""
        with self.store.lock:
            row = self.db.conn.execute("SELECT flow FROM conversations WHERE id = ?",
                                       (conversation_id,)).fetchone()
        if row is None or row[0] is None:
            return None
        value = json.loads(row[0])
        return value if isinstance(value, dict) else None

    def set_flow(self, conversation_id: int, flow: dict[str, Any]) -> None:
        with self.store.transaction() as conn:
            conn.execute("UPDATE conversations SET flow = ? WHERE id = ?",
                         (json.dumps(flow, ensure_ascii=False), conversation_id))

    def delete(self, conversation_id: int) -> None:
        """Delete the conversation with its sub-agents' conversations."""
        with self.store.transaction() as conn:
            conn.execute("DELETE FROM conversations WHERE id = ?1 OR parent_id = ?1",
                         (conversation_id,))

    def append(self, conversation_id: int, role: Role,
               content: builtins.list[dict[str, Any]] | str) -> int:
        now = utc_now()
        stored = json.dumps(content, ensure_ascii=False)
        # The index holds the message's words, not its JSON (migration 11); worked out before
        # the write lock is taken.
        words = searchable_text(content)
        with self.store.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO messages (conversation_id, role, content, search_text, created_at)"
                " VALUES (?, ?, ?, ?, ?)", (conversation_id, role, stored, words, now))
            conn.execute("UPDATE conversations SET updated_at = ? WHERE id = ?",
                         (now, conversation_id))
        assert cur.lastrowid is not None  # set by every successful INSERT
        return cur.lastrowid

    def delete_from(self, conversation_id: int, first_id: int) -> int:
        """Delete the conversation's messages from ``first_id`` on (that one included): the
        conversation forks there (edit and resend, regenerate). Returns how many went. The
        audit trail and the usage rows are history and stay."""
        with self.store.transaction() as conn:
            cur = conn.execute("DELETE FROM messages WHERE conversation_id = ? AND id >= ?",
                               (conversation_id, first_id))
            # the versions of the answers to the prompts that went (answer_versions)
            conn.execute("DELETE FROM answer_versions WHERE conversation_id = ?"
                         " AND prompt_id >= ?", (conversation_id, first_id))
            conn.execute("UPDATE conversations SET updated_at = ? WHERE id = ?",
                         (utc_now(), conversation_id))
        return cur.rowcount

    def last_request_usage(self, conversation_id: int) -> tuple[str, Usage] | None:
        """The model and tokens of the conversation's latest model request (for the context
        bar of a reopened conversation), or None."""
        with self.store.lock:
            row = self.db.conn.execute(
                "SELECT model, input_tokens, output_tokens, cache_write_tokens,"
                " cache_read_tokens FROM turn_usage WHERE conversation_id = ?"
                " ORDER BY id DESC LIMIT 1", (conversation_id,)).fetchone()
        if row is None:
            return None
        from app.core.pricing import Usage  # here: the ready window reads no usage

        return row[0], Usage(*row[1:])

    def replace_tool_result(self, conversation_id: int, tool_use_id: str,
                            content: str) -> bool:
        """Put ``content`` in the stored ``tool_result`` answering ``tool_use_id`` (a
        sub-agent's result that arrived after its orchestration run paused); False when no
        stored message answers it."""
        with self.store.transaction() as conn:
            rows = conn.execute(
                "SELECT id, content FROM messages WHERE conversation_id = ? AND role = 'user'"
                " ORDER BY id DESC LIMIT 50", (conversation_id,)).fetchall()
            for message_id, stored in rows:
                blocks = json.loads(stored)
                if not isinstance(blocks, list):
                    continue
                for block in blocks:
                    if isinstance(block, dict) and block.get("type") == "tool_result" and \
                            block.get("tool_use_id") == tool_use_id:
                        block["content"] = content
                        block.pop("is_error", None)
                        conn.execute("UPDATE messages SET content = ? WHERE id = ?",
                                     (json.dumps(blocks, ensure_ascii=False), message_id))
                        return True
        return False

    def last_message(self, conversation_id: int) -> StoredMessage | None:
        with self.store.lock:
            row = self.db.conn.execute(
                "SELECT id, role, content FROM messages WHERE conversation_id = ?"
                " ORDER BY id DESC LIMIT 1", (conversation_id,)).fetchone()
        return StoredMessage(row[0], row[1], json.loads(row[2])) if row else None

    def messages(self, conversation_id: int) -> builtins.list[StoredMessage]:
        with self.store.lock:
            rows = self.db.conn.execute(
                "SELECT id, role, content FROM messages WHERE conversation_id = ? ORDER BY id",
                (conversation_id,)).fetchall()
        return [StoredMessage(i, role, json.loads(content)) for i, role, content in rows]

    def search(self, query: str, limit: int = 50,
               project_root: str | None = None) -> builtins.list[Conversation]:
        """Conversations whose title or any message matches ``query`` (full-text, each word
        taken literally), most recently updated first; only ``project_root``'s when given.
        A message matches by its words (app.core.store.search_text), not its JSON."""
        match = fts_match(self.db, query)
        if not match:
            return []
        # One statement over both indexes (sqlite-utils' table.search covers one table).
        with self.store.lock:
            rows = self.db.conn.execute(
                "SELECT id, title, agent_id, project_root, created_at, updated_at"
                " FROM conversations WHERE (id IN"
                " (SELECT rowid FROM conversations_fts WHERE conversations_fts MATCH :q)"
                " OR id IN (SELECT conversation_id FROM messages WHERE id IN"
                " (SELECT rowid FROM messages_fts WHERE messages_fts MATCH :q)))"
                " AND (:root IS NULL OR project_root = :root) AND parent_id IS NULL"
                " ORDER BY updated_at DESC, id DESC LIMIT :limit",
                {"q": match, "limit": limit, "root": project_root}).fetchall()
        return [Conversation(*r) for r in rows]
