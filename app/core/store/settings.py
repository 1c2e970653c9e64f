"""Key/value application settings stored as JSON (never secrets: those go to the keyring)."""

from __future__ import annotations

import json
from typing import Any

import sqlite_utils

from app.core.store.db import db_lock, transaction, utc_now

_SECRET_HINTS = ("api_key", "apikey", "secret", "token", "password")


class SettingsRepository:
    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db

    def get(self, key: str, default: Any = None) -> Any:
        with db_lock(self.db):
            row = self.db.conn.execute("SELECT value FROM settings WHERE key = ?",
                                       (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def set(self, key: str, value: Any) -> None:
        if not key:
            raise ValueError("setting key must not be empty")
        if any(hint in key.lower() for hint in _SECRET_HINTS):
            raise ValueError(f"{key!r} looks like a secret; store it in the OS keyring instead")
        text = json.dumps(value, ensure_ascii=False)
        with transaction(self.db) as conn:
            conn.execute(
                "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value,"
                " updated_at = excluded.updated_at",
                (key, text, utc_now()))

    def delete(self, key: str) -> None:
        with transaction(self.db) as conn:
            conn.execute("DELETE FROM settings WHERE key = ?", (key,))
