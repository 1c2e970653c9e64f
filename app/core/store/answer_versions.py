"""The versions of an answer ("‹ 1/2 ›"): Regenerate sets the answer to a prompt aside instead
of deleting it, and the person can bring any version back.

The version shown is the conversation's own messages after the prompt (the model continues
from it); the others are kept in ``answer_versions`` (migration 13), each as the list of its
messages (``[role, content]``: the answer's text, its tool calls and their results). A row
per version, in the order they were made; the shown one's ``messages`` is NULL. Cutting the
conversation at or before the prompt (edit and resend) deletes its versions with it
(``ConversationRepository.delete_from``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from app.core.store.db import store_of, utc_now
from app.core.store.search_text import searchable_text

if TYPE_CHECKING:
    import sqlite3

    from app.core.store.db import Database

# One stored message of an answer: (role, content).
AnswerMessage = tuple[str, list[dict[str, Any]] | str]


class AnswerVersionRepository:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.store = store_of(db)

    def of(self, conversation_id: int, prompt_id: int) -> tuple[int, int] | None:
        """(the position shown, how many versions) of the answer to ``prompt_id``; None when
        it was never regenerated."""
        with self.store.lock:
            rows = self.db.conn.execute(
                "SELECT position, messages IS NULL FROM answer_versions"
                " WHERE conversation_id = ? AND prompt_id = ? ORDER BY position",
                (conversation_id, prompt_id)).fetchall()
        if len(rows) < 2:
            return None
        shown = next((i for i, (_position, is_shown) in enumerate(rows) if is_shown), None)
        return (len(rows) - 1 if shown is None else shown), len(rows)

    def set_aside(self, conversation_id: int, prompt_id: int) -> bool:
        """Regenerate: move the answer after ``prompt_id`` (the last prompt) into a version
        and make room for a new one, shown. False (nothing changed) when there is no answer
        (a prompt whose request failed)."""
        with self.store.transaction() as conn:
            answer = _answer_after(conn, conversation_id, prompt_id)
            if not answer:
                return False
            shown = conn.execute(
                "SELECT id FROM answer_versions WHERE conversation_id = ? AND prompt_id = ?"
                " AND messages IS NULL", (conversation_id, prompt_id)).fetchone()
            if shown is None:
                _insert_version(conn, conversation_id, prompt_id, answer)
            else:
                conn.execute("UPDATE answer_versions SET messages = ? WHERE id = ?",
                             (json.dumps(answer, ensure_ascii=False), shown[0]))
            _insert_version(conn, conversation_id, prompt_id, None)
            _delete_after(conn, conversation_id, prompt_id)
        return True

    def show(self, conversation_id: int, prompt_id: int, position: int) -> bool:
        """Make version ``position`` the conversation's answer to ``prompt_id`` (the last
        prompt): the shown answer is set aside in its row, that version's messages take its
        place. False when there is no such version."""
        with self.store.transaction() as conn:
            wanted = conn.execute(
                "SELECT id, messages FROM answer_versions WHERE conversation_id = ?"
                " AND prompt_id = ? AND position = ?",
                (conversation_id, prompt_id, position)).fetchone()
            if wanted is None:
                return False
            if wanted[1] is None:
                return True  # already shown
            answer = _answer_after(conn, conversation_id, prompt_id)
            conn.execute("UPDATE answer_versions SET messages = ? WHERE conversation_id = ?"
                         " AND prompt_id = ? AND messages IS NULL",
                         (json.dumps(answer, ensure_ascii=False), conversation_id, prompt_id))
            _delete_after(conn, conversation_id, prompt_id)
            now = utc_now()
            for role, content in json.loads(wanted[1]):
                conn.execute(
                    "INSERT INTO messages (conversation_id, role, content, search_text,"
                    " created_at) VALUES (?, ?, ?, ?, ?)",
                    (conversation_id, role, json.dumps(content, ensure_ascii=False),
                     searchable_text(content), now))
            conn.execute("UPDATE answer_versions SET messages = NULL WHERE id = ?",
                         (wanted[0],))
            conn.execute("UPDATE conversations SET updated_at = ? WHERE id = ?",
                         (now, conversation_id))
        return True


def _answer_after(conn: sqlite3.Connection, conversation_id: int,
                  prompt_id: int) -> list[AnswerMessage]:
    rows = conn.execute("SELECT role, content FROM messages WHERE conversation_id = ?"
                        " AND id > ? ORDER BY id", (conversation_id, prompt_id)).fetchall()
    return [(role, json.loads(content)) for role, content in rows]


def _delete_after(conn: sqlite3.Connection, conversation_id: int, prompt_id: int) -> None:
    conn.execute("DELETE FROM messages WHERE conversation_id = ? AND id > ?",
                 (conversation_id, prompt_id))


def _insert_version(conn: sqlite3.Connection, conversation_id: int, prompt_id: int,
                    answer: list[AnswerMessage] | None) -> None:
    conn.execute(
        "INSERT INTO answer_versions (conversation_id, prompt_id, position, messages,"
        " created_at) VALUES (?1, ?2, (SELECT count(*) FROM answer_versions"
        " WHERE conversation_id = ?1 AND prompt_id = ?2), ?3, ?4)",
        (conversation_id, prompt_id,
         None if answer is None else json.dumps(answer, ensure_ascii=False), utc_now()))
