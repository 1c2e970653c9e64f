"""Opening the database: WAL, foreign keys, migrations, first-run seed data."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import sqlite_utils

from app.core.store.errors import DatabaseError
from app.core.store.migrations import MIGRATIONS, SCHEMA_VERSION

__all__ = ["DatabaseError", "attached", "db_lock", "migrate", "open_database", "schema_version",
           "transaction", "utc_now"]

T = TypeVar("T")


_ATTACH_GUARD = threading.Lock()


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def attached(db: sqlite_utils.Database, name: str, factory: Callable[[], T]) -> T:
    """Per-database state (locks, change notifiers) that lives and dies with ``db``.

    Stored on the Database object itself: a registry keyed by ``id()`` would hand a new
    database the stale state of a collected one whose id was reused.
    """
    value = db.__dict__.get(name)
    if value is None:
        with _ATTACH_GUARD:
            value = db.__dict__.get(name)
            if value is None:
                value = db.__dict__[name] = factory()
    return value


def db_lock(db: sqlite_utils.Database) -> threading.RLock:
    """One lock per database: repositories may be called from worker threads."""
    return attached(db, "_tebiki_lock", threading.RLock)


@contextmanager
def transaction(db: sqlite_utils.Database) -> Iterator[sqlite3.Connection]:
    """A serialised write transaction; commits on success, rolls back on any exception."""
    with db_lock(db):
        conn = db.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")


def open_database(path: str | Path) -> sqlite_utils.Database:
    """Open (creating if needed) and migrate the Tebiki database at ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: we issue BEGIN/COMMIT ourselves (see ``transaction``), so Python's
    # implicit transactions never hold a write lock behind our back.
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10.0)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode loses nothing committed when the *process* dies; only an OS crash
        # or power loss can drop the last transactions, and never corrupts the file.
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=10000")
        db = sqlite_utils.Database(conn)
        migrate(db)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise DatabaseError(f"Cannot open database {path}: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return db


def schema_version(db: sqlite_utils.Database) -> int:
    return int(db.conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(db: sqlite_utils.Database) -> None:
    current = schema_version(db)
    if current > SCHEMA_VERSION:
        raise DatabaseError(
            f"database schema version {current} is newer than this Tebiki "
            f"understands ({SCHEMA_VERSION}); update Tebiki"
        )
    for version in range(current + 1, SCHEMA_VERSION + 1):
        with transaction(db) as conn:
            for statement in _split_sql(MIGRATIONS[version - 1]):
                conn.execute(statement)
            if version == 1:
                _seed_first_run(conn)
            conn.execute(f"PRAGMA user_version={version}")


def _split_sql(script: str) -> list[str]:
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


def _seed_first_run(conn: sqlite3.Connection) -> None:
    from app.core.store.seed import seed_default_rules

    seed_default_rules(conn, utc_now())
