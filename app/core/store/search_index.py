"""Migration 11: the full-text indexes hold words people and tools wrote, not JSON.

Migration 3 indexed ``messages.content`` and ``tool_executions.input`` as stored JSON text, so
"type", "text", "tool_use", "input" (and "path", "command" in the audit trail) matched every
conversation or call, and thinking signatures and base64 attachments were indexed.

- Messages: ``messages.search_text`` holds a message's words
  (app.core.store.search_text.searchable_text: needs Python, so the repository writes it on
  append and this migration fills it for the stored history). ``messages_fts`` indexes that
  column, kept in step by the same triggers as before.
- Audit trail: a call's input is indexed as its string values, never its keys. Plain SQL
  (``json_tree``), so nothing in the audit repository changes: the index's external content is
  the view ``tool_executions_search`` (the call's words), and the triggers write what the view
  reads, so the index's columns (``highlight``, ``snippet``) read back what was indexed. (FTS5's
  ``rebuild`` cannot read this view: SQLite 3.40 fails it; the index is filled by INSERT
  ... SELECT from the view instead.) A call's row is
  updated several times as it runs (state, changes, reviews); the index is rewritten only when
  the name, input or output changes.

All of it runs in the migration's transaction (app.core.store.db.migrate): a crash anywhere
leaves the previous version with its old indexes intact, and the next start redoes it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from app.core.store.search_text import MAX_TOOL_TEXT
from app.core.store.sql_script import _fts_sql, split_sql

if TYPE_CHECKING:
    import sqlite_utils

# Messages are read and rewritten in id batches: a long history is never held in memory.
_BATCH = 500


def _input_words(json_text: str) -> str:
    """SQL for the string values of the JSON in ``json_text`` (each bounded), in document
    order, space-separated. The view and the triggers use this one expression, so what a
    trigger indexes is what the view (and a later delete) reads."""
    return (f"(SELECT coalesce(group_concat(substr(value, 1, {MAX_TOOL_TEXT}), ' '), '')"
            f" FROM json_tree({json_text}) WHERE type = 'text')")


def _audit_index_sql() -> str:
    fts = "tool_executions_fts"
    cols = "rowid, tool_name, input, output"
    new = f"new.id, new.tool_name, {_input_words('new.input')}, new.output"
    old = f"old.id, old.tool_name, {_input_words('old.input')}, old.output"
    return f"""
DROP TRIGGER tool_executions_ai;
DROP TRIGGER tool_executions_ad;
DROP TRIGGER tool_executions_au;
DROP TABLE {fts};
CREATE VIEW tool_executions_search (id, tool_name, input, output) AS
    SELECT id, tool_name, {_input_words('tool_executions.input')}, output FROM tool_executions;
CREATE VIRTUAL TABLE {fts} USING FTS5 (
    tool_name, input, output,
    content='tool_executions_search', content_rowid='id'
);
INSERT INTO {fts} ({cols}) SELECT id, tool_name, input, output FROM tool_executions_search;
CREATE TRIGGER tool_executions_ai AFTER INSERT ON tool_executions BEGIN
  INSERT INTO {fts} ({cols}) VALUES ({new});
END;
CREATE TRIGGER tool_executions_ad AFTER DELETE ON tool_executions BEGIN
  INSERT INTO {fts} ({fts}, {cols}) VALUES ('delete', {old});
END;
CREATE TRIGGER tool_executions_au AFTER UPDATE OF tool_name, input, output
    ON tool_executions BEGIN
  INSERT INTO {fts} ({fts}, {cols}) VALUES ('delete', {old});
  INSERT INTO {fts} ({cols}) VALUES ({new});
END;
"""


def index_words_not_json(db: sqlite_utils.Database) -> None:
    """Migration 11 (see the module docstring); given the connection inside its transaction."""
    # Looked up when run, not imported above: a test can make it fail part-way.
    from app.core.store import search_text

    conn = db.conn
    for trigger in ("messages_ai", "messages_ad", "messages_au"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TABLE messages_fts")
    conn.execute("ALTER TABLE messages ADD COLUMN search_text TEXT NOT NULL DEFAULT ''")
    last_id = 0
    while rows := conn.execute("SELECT id, content FROM messages WHERE id > ? ORDER BY id"
                               " LIMIT ?", (last_id, _BATCH)).fetchall():
        words = []
        for message_id, content in rows:
            try:
                words.append((search_text.searchable_text(json.loads(content)), message_id))
            except (ValueError, RecursionError):  # JSON SQLite accepts and Python does not
                words.append(("", message_id))
        conn.executemany("UPDATE messages SET search_text = ? WHERE id = ?", words)
        last_id = rows[-1][0]
    for statement in split_sql(_fts_sql("messages", ("search_text",))):
        conn.execute(statement)  # its INSERT ... SELECT indexes every message's words
    for statement in split_sql(_audit_index_sql()):
        conn.execute(statement)
