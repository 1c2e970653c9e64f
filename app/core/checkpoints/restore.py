"""Writing a checkpoint's files back into the project folder, and never anywhere else.

Every operation walks from an open descriptor of the project root one folder at a time with
``O_NOFOLLOW | O_DIRECTORY``: a folder that is a symlink (wherever it points), a component
named ``.git``, or a folder that holds a repository of its own stops the operation, so no
write, delete or chmod can land outside the project or in any ``.git``. Files are written to a
temporary file in the same folder and moved into place with ``os.replace``; symlinks are made
the same way, so a path is never seen half-written and an existing symlink at the path is
replaced, not followed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from app.core.checkpoints.model import ActionKind, PlannedAction, Resolution, RestoreResult
from app.core.checkpoints.shadow_repo import MODE_EXECUTABLE, MODE_SYMLINK, TreeEntry

__all__ = ["ProjectWriter", "UnsafePathError", "action_for", "apply_actions"]


class UnsafePathError(OSError):
    """The path would lead outside the project, into a .git, or through a symlink."""


def action_for(target: TreeEntry | None, current: TreeEntry | None) -> ActionKind | None:
    """What turns ``current`` into ``target`` (``None``: they are the same already)."""
    if target == current:
        return None
    if target is None:
        return "delete"
    if target[0] == MODE_SYMLINK:
        return "symlink"
    if current is not None and current[1] == target[1] and current[0] != MODE_SYMLINK:
        return "chmod"
    return "write"


def _check_relative(rel: str) -> list[str]:
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise UnsafePathError(errno.EINVAL, "not a relative path inside the project", rel)
    if any(p.casefold() == ".git" for p in parts):
        raise UnsafePathError(errno.EPERM, "paths inside .git are never written", rel)
    return parts


class ProjectWriter:
    """File operations confined to ``root`` (see the module docstring)."""

    def __init__(self, root: Path):
        self.root = root

    @contextlib.contextmanager
    def _parent(self, rel: str, *, create: bool) -> Iterator[tuple[int, str]]:
        parts = _check_relative(rel)
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for depth, name in enumerate(parts[:-1]):
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, 0o777, dir_fd=fd)
                try:
                    child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                                    dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_symlink(name, fd):
                        where = "/".join(parts[:depth + 1])
                        raise UnsafePathError(errno.ELOOP, "a folder on the way is a symlink",
                                              where) from exc
                    raise
                os.close(fd)
                fd = child
                if _exists(".git", fd):
                    raise UnsafePathError(errno.EPERM, "inside a nested repository",
                                          "/".join(parts[:depth + 1]))
            yield fd, parts[-1]
        finally:
            os.close(fd)

    def write_file(self, rel: str, data: bytes, executable: bool) -> None:
        with self._parent(rel, create=True) as (dir_fd, name):
            old = _lstat(name, dir_fd)
            tmp = f".{name[:40]}.tebiki-{secrets.token_hex(4)}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666,
                         dir_fd=dir_fd)
            try:
                with os.fdopen(fd, "wb", closefd=True) as f:
                    f.write(data)
                    # keep the person's permission bits when replacing; else the umask's
                    base = old.st_mode if old and stat.S_ISREG(old.st_mode) else \
                        os.stat(tmp, dir_fd=dir_fd, follow_symlinks=False).st_mode
                    os.fchmod(f.fileno(), _with_exec_bits(base, executable))
                os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dir_fd)
                raise

    def write_symlink(self, rel: str, link_target: bytes) -> None:
        with self._parent(rel, create=True) as (dir_fd, name):
            tmp = f".{name[:40]}.tebiki-{secrets.token_hex(4)}.tmp"
            os.symlink(os.fsdecode(link_target), tmp, dir_fd=dir_fd)
            try:
                os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dir_fd)
                raise

    def set_executable(self, rel: str, executable: bool) -> None:
        with self._parent(rel, create=False) as (dir_fd, name):
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    raise UnsafePathError(errno.EINVAL, "not a regular file", rel)
                os.fchmod(fd, _with_exec_bits(st.st_mode, executable))
            finally:
                os.close(fd)

    def delete(self, rel: str) -> None:
        with self._parent(rel, create=False) as (dir_fd, name):
            st = _lstat(name, dir_fd)
            if st is None:
                return
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "a folder is in the way", rel)
            os.unlink(name, dir_fd=dir_fd)

    def delete_tree(self, rel: str) -> None:
        """Delete file or folder ``rel`` with everything in it, never following a symlink;
        a repository inside stops it (what is already deleted stays deleted)."""
        with self._parent(rel, create=False) as (dir_fd, name):
            st = _lstat(name, dir_fd)
            if st is None:
                return
            if stat.S_ISDIR(st.st_mode):
                _empty_folder(name, dir_fd, rel)
                os.rmdir(name, dir_fd=dir_fd)
            else:
                os.unlink(name, dir_fd=dir_fd)

    def exists(self, rel: str) -> bool:
        """Whether anything (file, link, folder) is at ``rel``; links are not followed."""
        try:
            os.lstat(self.root / rel)
        except OSError:
            return False
        return True

    def remove_empty_dir(self, rel: str) -> bool:
        """Remove folder ``rel`` if it is empty; whether it was removed."""
        try:
            with self._parent(rel, create=False) as (dir_fd, name):
                os.rmdir(name, dir_fd=dir_fd)
        except OSError:
            return False
        return True


def _empty_folder(name: str, parent_fd: int, rel: str) -> None:
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
    try:
        if _exists(".git", fd):
            raise UnsafePathError(errno.EPERM, "holds a repository of its own", rel)
        for entry in os.listdir(fd):
            st = _lstat(entry, fd)
            if st is not None and stat.S_ISDIR(st.st_mode):
                _empty_folder(entry, fd, f"{rel}/{entry}")
                os.rmdir(entry, dir_fd=fd)
            elif st is not None:
                os.unlink(entry, dir_fd=fd)
    finally:
        os.close(fd)


def _with_exec_bits(mode: int, executable: bool) -> int:
    mode &= 0o7777
    if executable:  # as git checks out: x wherever r is
        return mode | ((mode & 0o444) >> 2) | 0o100
    return mode & ~0o111


def _lstat(name: str, dir_fd: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _exists(name: str, dir_fd: int) -> bool:
    return _lstat(name, dir_fd) is not None


def _is_symlink(name: str, dir_fd: int) -> bool:
    st = _lstat(name, dir_fd)
    return st is not None and stat.S_ISLNK(st.st_mode)


def _parents(rel: str) -> Iterable[str]:
    parts = rel.split("/")[:-1]
    for n in range(len(parts), 0, -1):
        yield "/".join(parts[:n])


def apply_actions(
    writer: ProjectWriter,
    actions: Iterable[PlannedAction],
    now: Mapping[str, TreeEntry],
    target_tree: Mapping[str, TreeEntry],
    expected_tree: Mapping[str, TreeEntry],
    target_dirs: set[str],
    resolutions: Mapping[str, Resolution],
    read_blob: Callable[[str], bytes],
    result: RestoreResult,
) -> None:
    """Carry out ``actions`` against the folder's state ``now`` (taken just before).

    Each action is re-derived from ``now``: a path the person changed since the plan was made
    is a conflict again, and one already at the target is left alone. A folder emptied by a
    delete is removed unless it is in ``target_dirs`` (folders that hold files in the target).
    """
    deletes: list[str] = []
    writes: list[tuple[str, TreeEntry]] = []
    for action in actions:
        path = action.path
        current, target = now.get(path), target_tree.get(path)
        kind = action_for(target, current)
        if kind is None:
            continue
        conflict = current != expected_tree.get(path) or (
            current is None and writer.exists(path))  # there, but not covered
        if conflict and resolutions.get(path) != "take":
            result.kept.append(path)
            continue
        if target is None:
            deletes.append(path)
        else:
            writes.append((path, target))
    for path in sorted(deletes, key=lambda p: (-p.count("/"), p)):
        try:
            writer.delete(path)
            result.deleted.append(path)
        except OSError as exc:
            result.errors[path] = _describe(exc)
    emptied = {d for p in result.deleted for d in _parents(p)} - target_dirs
    for folder in sorted(emptied, key=lambda p: (-p.count("/"), p)):
        writer.remove_empty_dir(folder)
    for path, (mode, oid) in sorted(writes):
        current = now.get(path)
        try:
            if mode == MODE_SYMLINK:
                writer.write_symlink(path, read_blob(oid))
            elif current is not None and current[1] == oid and current[0] != MODE_SYMLINK:
                writer.set_executable(path, mode == MODE_EXECUTABLE)
            else:
                writer.write_file(path, read_blob(oid), mode == MODE_EXECUTABLE)
            result.written.append(path)
        except OSError as exc:
            result.errors[path] = _describe(exc)


def _describe(exc: OSError) -> str:
    return exc.strerror or str(exc)
