"""Key/value application settings stored as JSON (never secrets: those go to the keyring).

Each setting is declared once, with its kind and default, in app.core.settings_fields; read and
write one through its field (``read``/``write``): a reader gets the declared type, the default
standing in for a value never stored or of the wrong kind.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeVar

from app.core.settings_fields import LAST_CONVERSATIONS, SettingField
from app.core.store.db import store_of, utc_now

if TYPE_CHECKING:  # only annotations name the store
    from app.core.store.db import Database

_SECRET_HINTS = ("api_key", "apikey", "secret", "token", "password")
T = TypeVar("T")


class SettingsRepository:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.store = store_of(db)

    def get(self, key: str, default: Any = None) -> Any:
        with self.store.lock:
            row = self.db.conn.execute("SELECT value FROM settings WHERE key = ?",
                                       (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def read(self, setting: SettingField[T]) -> T:
        """The setting's value; its default when unset or of the wrong kind (the table only
        holds valid JSON: a CHECK constraint)."""
        return setting.value_of(self.get(setting.key))

    def write(self, setting: SettingField[T], value: T) -> None:
        self.set(setting.key, value)

    def set(self, key: str, value: Any) -> None:
        if not key:
            raise ValueError("setting key must not be empty")
        if any(hint in key.lower() for hint in _SECRET_HINTS):
            raise ValueError(f"{key!r} looks like a secret; store it in the OS keyring instead")
        text = json.dumps(value, ensure_ascii=False)
        # The statement sqlite-utils' upsert(pk="key") runs, without its schema look-ups (and
        # its import): a new key is inserted, an existing one gets the new value and time.
        with self.store.transaction() as conn:
            conn.execute(
                'INSERT INTO "settings" ("key", "updated_at", "value") VALUES (?, ?, ?)'
                ' ON CONFLICT("key") DO UPDATE SET "updated_at" = excluded."updated_at",'
                ' "value" = excluded."value"', (key, utc_now(), text))

    def delete(self, key: str) -> None:
        with self.store.transaction() as conn:
            conn.execute("DELETE FROM settings WHERE key = ?", (key,))

    def last_conversation(self, project_root: str) -> int | None:
        """The conversation last open in ``project_root`` (None: none remembered)."""
        value = self.read(LAST_CONVERSATIONS).get(project_root)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def set_last_conversation(self, project_root: str, conversation_id: int | None) -> None:
        """Remember ``conversation_id`` as open in ``project_root`` (None forgets it)."""
        with self.store.lock:  # read-modify-write of one key: no other writer in between
            remembered = dict(self.read(LAST_CONVERSATIONS))
            if remembered.get(project_root) == conversation_id:
                return
            if conversation_id is None:
                remembered.pop(project_root, None)
            else:
                remembered[project_root] = conversation_id
            self.write(LAST_CONVERSATIONS, remembered)
