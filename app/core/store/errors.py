"""The store's error, importable without the store (start-up reports it before loading it)."""

from __future__ import annotations


class DatabaseError(RuntimeError):
    """The database file cannot be used (newer schema, not a database, ...)."""
