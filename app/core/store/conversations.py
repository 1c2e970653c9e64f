"""Conversations and their messages (Anthropic content blocks stored as JSON)."""

from __future__ import annotations

import builtins
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from app.core.store.db import fts_match, store_of, utc_now

if TYPE_CHECKING:  # the store opens without sqlite-utils (app.core.store.db.Database)
    import sqlite_utils

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
    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db
        self.store = store_of(db)

    def create(self, *, title: str = "", agent_id: int | None = None,
               project_root: str | None = None) -> Conversation:
        now = utc_now()
        with self.store.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO conversations (agent_id, title, project_root, created_at,"
                " updated_at) VALUES (?, ?, ?, ?, ?)", (agent_id, title, project_root, now, now))
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
                " FROM conversations ORDER BY updated_at DESC, id DESC LIMIT ?",
                (limit,)).fetchall()
        return [Conversation(*r) for r in rows]

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
        with self.store.transaction() as conn:
            conn.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))

    def append(self, conversation_id: int, role: Role,
               content: builtins.list[dict[str, Any]] | str) -> int:
        now = utc_now()
        with self.store.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO messages (conversation_id, role, content, created_at)"
                " VALUES (?, ?, ?, ?)",
                (conversation_id, role, json.dumps(content, ensure_ascii=False), now))
            conn.execute("UPDATE conversations SET updated_at = ? WHERE id = ?",
                         (now, conversation_id))
        assert cur.lastrowid is not None  # set by every successful INSERT
        return cur.lastrowid

    def messages(self, conversation_id: int) -> builtins.list[StoredMessage]:
        with self.store.lock:
            rows = self.db.conn.execute(
                "SELECT id, role, content FROM messages WHERE conversation_id = ? ORDER BY id",
                (conversation_id,)).fetchall()
        return [StoredMessage(i, role, json.loads(content)) for i, role, content in rows]

    def search(self, query: str, limit: int = 50) -> builtins.list[Conversation]:
        """Conversations whose title or any message matches ``query`` (full-text, each word
        taken literally), most recently updated first."""
        match = fts_match(self.db, query)
        if not match:
            return []
        # One statement over both indexes (sqlite-utils' table.search covers one table).
        with self.store.lock:
            rows = self.db.conn.execute(
                "SELECT id, title, agent_id, project_root, created_at, updated_at"
                " FROM conversations WHERE id IN"
                " (SELECT rowid FROM conversations_fts WHERE conversations_fts MATCH :q)"
                " OR id IN (SELECT conversation_id FROM messages WHERE id IN"
                " (SELECT rowid FROM messages_fts WHERE messages_fts MATCH :q))"
                " ORDER BY updated_at DESC, id DESC LIMIT :limit",
                {"q": match, "limit": limit}).fetchall()
        return [Conversation(*r) for r in rows]
