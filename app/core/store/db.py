"""Opening the database: WAL, foreign keys, migrations, first-run seed data.

``open_database`` returns a ``Database``: the plain ``sqlite3`` connection every repository
uses, and the sqlite-utils API on demand. Opening, migrating and every repository query use
the standard library only, so start-up does not import sqlite-utils (~60 ms with click,
pluggy, dateutil and tabulate). What Tebiki keeps per database (the write lock, the
rules-changed notifier) lives in our own ``Store``, found with ``store_of(db)``.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.store.errors import DatabaseError
from app.core.store.migrations import MIGRATIONS, SCHEMA_VERSION
from app.core.store.sql_script import split_sql

if TYPE_CHECKING:
    import sqlite_utils

    # To type checkers a ``Database`` is the sqlite-utils one: every attribute of that API
    # is reachable on it (``__getattr__`` below), and callers annotated with it keep working.
    _DatabaseBase = sqlite_utils.Database
else:
    _DatabaseBase = object

__all__ = ["ChangeNotifier", "Database", "DatabaseError", "Store", "db_lock", "fts_match",
           "migrate", "open_database", "quote_fts", "schema_version", "store_of", "transaction",
           "utc_now"]


class Database(_DatabaseBase):
    """An open Tebiki database: ``conn`` (``sqlite3``), plus sqlite-utils when asked for.

    The repositories and migrations use ``conn`` alone. Any other attribute (``table``,
    ``table_names``, ``db[name]``, ...) is sqlite-utils' ``Database`` API, served by one made on
    the same connection the first time it is needed (importing sqlite-utils then, not at
    start-up).
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._utils: sqlite_utils.Database | None = None
        self._utils_lock = threading.Lock()

    @property
    def utils(self) -> sqlite_utils.Database:
        """The sqlite-utils ``Database`` on this connection (created, and imported, once)."""
        utils = self._utils
        if utils is None:
            with self._utils_lock:
                utils = self._utils
                if utils is None:
                    import sqlite_utils

                    # execute_plugins=False: Tebiki uses no sqlite-utils plugins; looking for
                    # them scans every installed package's entry points and would let any
                    # installed plugin hook our connection.
                    utils = self._utils = sqlite_utils.Database(self.conn,
                                                                execute_plugins=False)
        return utils

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes this class does not define: the sqlite-utils API.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.utils, name)

    def __getitem__(self, table_name: str) -> Any:
        return self.utils[table_name]

    def close(self) -> None:
        # Under the store's lock, which every query holds: closing a connection while a worker
        # thread's statement runs on it crashes the process (sqlite3 frees what the statement
        # uses). A query that comes after gets "closed database", an exception.
        with store_of(self).lock:
            self.conn.close()


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
    """What Tebiki keeps for one open database, next to its ``Database``.

    Holds the database only weakly: ``store_of`` keys a weak mapping by it, and a
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

        sqlite-utils calls made inside it (``db.utils``) join it: the library only commits
        transactions it opened itself."""
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
    """``store_of(db).transaction()``, for callers holding the ``Database``."""
    return store_of(db).transaction()


# sqlite-utils' ``Database.quote_fts``, here so a search does not import sqlite-utils.
_QUOTE_FTS_RE = re.compile(r'\s+|(".*?")')


def quote_fts(query: str) -> str:
    """Each word of ``query`` as a quoted FTS phrase (sqlite-utils' ``quote_fts``, same
    output): words, not FTS syntax; an unbalanced ``"`` is closed at the end."""
    if query.count('"') % 2:
        query += '"'
    bits = [b for b in _QUOTE_FTS_RE.split(query) if b and b != '""']
    return " ".join(f'"{bit}"' if not bit.startswith('"') else bit for bit in bits)


def fts_match(db: sqlite_utils.Database, query: str) -> str:
    """``query`` as an FTS5 MATCH expression that searches for its words literally ("" when
    it has none: FTS5 rejects an empty MATCH).

    ``quote_fts`` makes each word a quoted phrase, so FTS syntax the user typed (NEAR, *,
    quotes, parentheses, column filters) is searched for, never interpreted. NUL is removed
    first: the FTS5 query parser stops at it, leaving a quote unterminated."""
    return quote_fts(query.replace("\x00", " ")).strip()


def open_database(path: str | Path) -> Database:
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
        # As sqlite-utils sets it on every connection it wraps (this one used to be wrapped at
        # open): a trigger's writes fire triggers too.
        conn.execute("PRAGMA recursive_triggers=on")
        db = Database(conn)
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
                for statement in split_sql(migration):
                    conn.execute(statement)
            else:
                migration(db)  # given the connection inside our transaction
            if version == 1:
                _seed_first_run(conn)
            conn.execute(f"PRAGMA user_version={version}")


def _seed_first_run(conn: sqlite3.Connection) -> None:
    from app.core.store.seed import seed_default_rules

    seed_default_rules(conn, utc_now())
