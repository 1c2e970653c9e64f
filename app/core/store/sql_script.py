"""SQL text the migrations run: FTS5 tables with their triggers, and scripts split into
statements. Its own module so the migration steps that live elsewhere
(app.core.store.search_index) can use it without importing the migration list back."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable


def _quote(identifier: str) -> str:
    return '"{}"'.format(identifier.replace('"', '""'))


def _fts_sql(table: str, columns: Iterable[str]) -> str:
    cols = ", ".join(_quote(c) for c in columns)
    old = ", ".join(f"old.{_quote(c)}" for c in columns)
    new = ", ".join(f"new.{_quote(c)}" for c in columns)
    t, fts = _quote(table), _quote(table + "_fts")
    ai, ad, au = (_quote(table + suffix) for suffix in ("_ai", "_ad", "_au"))
    return f"""CREATE VIRTUAL TABLE {fts} USING FTS5 (
    {cols},
    content={t}
);
INSERT INTO {fts} (rowid, {cols})
    SELECT rowid, {cols} FROM {t};
CREATE TRIGGER {ai} AFTER INSERT ON {t} BEGIN
  INSERT INTO {fts} (rowid, {cols}) VALUES (new.rowid, {new});
END;
CREATE TRIGGER {ad} AFTER DELETE ON {t} BEGIN
  INSERT INTO {fts} ({fts}, rowid, {cols}) VALUES('delete', old.rowid, {old});
END;
CREATE TRIGGER {au} AFTER UPDATE ON {t} BEGIN
  INSERT INTO {fts} ({fts}, rowid, {cols}) VALUES('delete', old.rowid, {old});
  INSERT INTO {fts} (rowid, {cols}) VALUES (new.rowid, {new});
END;
"""


def split_sql(script: str) -> list[str]:
    # executescript() would COMMIT our transaction; run statement by statement instead.
    statements, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                statements.append(buf.strip())
            buf = ""
    if buf.strip():
        statements.append(buf.strip())
    return statements
