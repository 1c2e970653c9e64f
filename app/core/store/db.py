"""Opening the database: WAL, foreign keys, migrations, first-run seed data.

``open_database`` returns the sqlite-utils ``Database`` (the type every repository accepts);
what Tebiki keeps per database (the write lock, the rules-changed notifier) lives in our own
``Store``, found with ``store_of(db)``.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import sqlite_utils

from app.core.store.errors import DatabaseError
from app.core.store.migrations import MIGRATIONS, SCHEMA_VERSION

__all__ = ["ChangeNotifier", "DatabaseError", "Store", "db_lock", "fts_match", "migrate",
           "open_database", "schema_version", "store_of", "transaction", "utc_now"]


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(eq=False)
class ChangeNotifier:
    """A generation counter and listeners: readers compare generations to know their cache is
    stale, listeners (any thread) hear about each change."""

    generation: int = 0
    listeners: list[Callable[[], None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def bump(self) -> None:
        with self.lock:
            self.generation += 1
            listeners = list(self.listeners)
        # Called outside the lock: a listener may read the generation or unsubscribe.
        for listener in listeners:
            listener()

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        with self.lock:
            self.listeners.append(listener)

        def unsubscribe() -> None:
            with self.lock:
                if listener in self.listeners:
                    self.listeners.remove(listener)

        return unsubscribe


class Store:
    """What Tebiki keeps for one open database, next to the sqlite-utils ``Database``.

    Holds the sqlite-utils object only weakly: ``store_of`` keys a weak mapping by it, and a
    strong reference back would keep every database (and its connection) alive for ever.
    """

    def __init__(self, db: sqlite_utils.Database) -> None:
        self._db = weakref.ref(db)
        self.conn: sqlite3.Connection = db.conn
        # Re-entrant: a repository method holding it may call another (profiles' ensure_default).
        self.lock = threading.RLock()
        self.rule_changes = ChangeNotifier()

    @property
    def db(self) -> sqlite_utils.Database:
        db = self._db()
        if db is None:  # only reachable through a Store kept past its database
            raise DatabaseError("the database was closed and collected")
        return db

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A serialised write transaction; commits on success, rolls back on any exception.

        sqlite-utils calls made inside it (upsert, enable_fts) join it: the library only
        commits transactions it opened itself."""
        with self.lock:
            conn = self.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")


# Weak keys: an entry goes when its database is collected, so a new database can never be
# handed the lock or listeners of a dead one (an ``id()``-keyed registry could, on id reuse).
_STORES: weakref.WeakKeyDictionary[sqlite_utils.Database, Store] = weakref.WeakKeyDictionary()
_STORES_GUARD = threading.Lock()


def store_of(db: sqlite_utils.Database) -> Store:
    """Tebiki's per-database state for ``db`` (created on first use, one per database)."""
    store = _STORES.get(db)
    if store is None:
        with _STORES_GUARD:
            store = _STORES.get(db)
            if store is None:
                store = _STORES[db] = Store(db)
    return store


def db_lock(db: sqlite_utils.Database) -> threading.RLock:
    """One lock per database: repositories may be called from worker threads."""
    return store_of(db).lock


def transaction(db: sqlite_utils.Database) -> AbstractContextManager[sqlite3.Connection]:
    """``store_of(db).transaction()``, for callers holding the sqlite-utils object."""
    return store_of(db).transaction()


def fts_match(db: sqlite_utils.Database, query: str) -> str:
    """``query`` as an FTS5 MATCH expression that searches for its words literally ("" when
    it has none: FTS5 rejects an empty MATCH).

    sqlite-utils' quote_fts makes each word a quoted phrase, so FTS syntax the user typed
    (NEAR, *, quotes, parentheses, column filters) is searched for, never interpreted. NUL is
    removed first: the FTS5 query parser stops at it, leaving a quote unterminated."""
    return db.quote_fts(query.replace("\x00", " ")).strip()


def open_database(path: str | Path) -> sqlite_utils.Database:
    """Open (creating if needed) and migrate the Tebiki database at ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: we issue BEGIN/COMMIT ourselves (see ``Store.transaction``), so
    # Python's implicit transactions never hold a write lock behind our back.
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10.0)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode loses nothing committed when the *process* dies; only an OS crash
        # or power loss can drop the last transactions, and never corrupts the file.
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=10000")
        # execute_plugins=False: Tebiki uses no sqlite-utils plugins, and looking for them
        # scans every installed package's entry points (~10 ms of start-up, measured) and
        # would let any installed plugin hook our connection.
        db = sqlite_utils.Database(conn, execute_plugins=False)
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
    store = store_of(db)
    for version in range(current + 1, SCHEMA_VERSION + 1):
        migration = MIGRATIONS[version - 1]
        with store.transaction() as conn:
            if isinstance(migration, str):
                for statement in _split_sql(migration):
                    conn.execute(statement)
            else:
                migration(db)  # sqlite-utils joins our transaction (see Store.transaction)
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
