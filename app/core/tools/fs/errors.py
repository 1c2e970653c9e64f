"""Filesystem errors, each explained for the model: what went wrong and how to fix the call."""

from __future__ import annotations


class FsError(Exception):
    """A filesystem problem explained for the model: what went wrong and how to fix the call."""


class InvalidPathError(FsError, ValueError):
    """The path text itself is unusable (empty, NUL byte, too long, names a directory)."""


class OutsideScopeError(FsError):
    """A write would land outside every allowed write directory (or writing is disabled)."""


class NotFoundError(FsError):
    pass


class IsADirectoryFsError(FsError):
    pass


class WriteConflictError(FsError):
    """The target is not as the call assumed: exists in create mode, or changed since read."""


class ProtectedPathError(FsError):
    """The write would change a path the call's checkpoint does not record (the call runs
    unasked, so such paths are read-only to it)."""
