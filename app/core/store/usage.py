"""Token usage per model turn (``turn_usage``): written as each turn completes, summed per
conversation and per day for the usage display and Settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.pricing import Usage
from app.core.store.db import store_of, utc_now

if TYPE_CHECKING:  # only annotations name the store
    from app.core.store.db import Database

_SUMS = ("SELECT coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),"
         " coalesce(sum(cache_write_tokens), 0), coalesce(sum(cache_read_tokens), 0)")


class UsageRepository:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.store = store_of(db)

    def record(self, conversation_id: int | None, model: str, usage: Usage,
               cache_ttl: str = "5m") -> None:
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO turn_usage (conversation_id, model, input_tokens, output_tokens,"
                " cache_write_tokens, cache_read_tokens, cache_ttl, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (conversation_id, model, max(0, usage.input_tokens),
                 max(0, usage.output_tokens), max(0, usage.cache_write_tokens),
                 max(0, usage.cache_read_tokens), cache_ttl, utc_now()))

    def for_conversation(self, conversation_id: int) -> dict[str, Usage]:
        """The conversation's usage per model, its sub-agents' included (a child's turns are
        stored under the child's own conversation, whose ``parent_id`` is this one)."""
        with self.store.lock:
            rows = self.db.conn.execute(
                _SUMS.replace("SELECT", "SELECT model,") + " FROM turn_usage"
                " WHERE conversation_id = ?1 OR conversation_id IN"
                " (SELECT id FROM conversations WHERE parent_id = ?1) GROUP BY model",
                (conversation_id,)).fetchall()
        return {model: Usage(*sums) for model, *sums in rows}

    def per_day(self, days: int = 30) -> list[tuple[str, str, Usage]]:
        """(day, model, usage), newest day first, for the last ``days`` days."""
        with self.store.lock:
            rows = self.db.conn.execute(
                _SUMS.replace("SELECT", "SELECT substr(created_at, 1, 10) AS day, model,")
                + " FROM turn_usage WHERE created_at >= date('now', ?)"
                " GROUP BY day, model ORDER BY day DESC, model",
                (f"-{max(1, days)} days",)).fetchall()
        return [(day, model, Usage(*sums)) for day, model, *sums in rows]
