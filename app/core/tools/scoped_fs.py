"""ScopedFs: the one door between the file tools and the filesystem.

Reads are free. Every write (create, overwrite, append, edit, mkdir) is checked *structurally*
against the allowed write dirs, because a string comparison such as ``path.startswith(allowed)``
is what seed 000's review finding A-3 showed to be escapable:

1. The requested path is made absolute (``~`` expanded, relative paths joined to the working
   dir) and resolved with ``realpath``: ``..`` chains and symlinks are followed, so a symlink
   inside the scope that leads outside *is* outside. The result must lie inside an allowed dir
   component-wise (``doc`` never admits ``doc_evil``).
2. The write then walks from ``/`` to the target one directory at a time through directory file
   descriptors opened with ``O_NOFOLLOW``. If anything was swapped for a symlink after step 1,
   the walk fails instead of following it, so the check and the write cannot be raced apart.
   Missing directories (``create_dirs``) are created one by one *inside* the scope during that
   walk, never before the check (seed 000 created parents first; that is the bug we avoid).
3. The final file is touched only through the verified directory fd: ``O_EXCL`` for create,
   a temporary file + ``rename`` for overwrite and edit (atomic, mode preserved, and a hard link
   to a file elsewhere keeps its old content because the rename gives the name a new inode),
   ``O_APPEND|O_NOFOLLOW`` for append. A file with more than one hard link is never appended to
   in place: we copy it, append to the copy and rename it over the name (copy-then-replace), so
   the other names (which may lie outside the scope) keep their content.

On systems without ``*at`` calls (Windows) the same steps run on paths with ``lstat`` checks;
that closes every static escape but not a deliberate race.

The module also holds the pieces the file tools share: .gitignore-aware tree walking, a glob
translator, and small helpers for reading tool arguments.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import re
import secrets
import stat
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from app.core.tools.base import SubjectError

if TYPE_CHECKING:
    import pathspec

WriteMode = Literal["create", "overwrite", "append"]
WRITE_MODES: tuple[str, ...] = ("create", "overwrite", "append")

MAX_PATH_CHARS = 4096

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
# O_PATH lets us hold a directory we may search but not list (e.g. a 0711 home dir).
_O_DIRFD = getattr(os, "O_PATH", os.O_RDONLY)
_O_BINARY = getattr(os, "O_BINARY", 0)

#: True where directory-fd based, race-free walking is available (Linux, macOS, BSD).
HAVE_DIR_FD: bool = bool(_O_NOFOLLOW and _O_DIRECTORY) and all(
    f in os.supports_dir_fd for f in (os.open, os.stat, os.mkdir, os.rmdir, os.unlink, os.rename)
)


# -- errors ----------------------------------------------------------------------------------


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


# -- path text -------------------------------------------------------------------------------


def check_path_text(path: object, what: str = "path") -> str:
    """Reject path strings no filesystem call should ever see, with a message saying why."""
    if not isinstance(path, str):
        raise InvalidPathError(f"{what} must be a string, got {type(path).__name__}.")
    if not path.strip():
        raise InvalidPathError(f"{what} is empty. Give a file path, relative to the working "
                               "directory or absolute.")
    if "\x00" in path:
        raise InvalidPathError(f"{what} contains a NUL character (\\0), which no file name can "
                               "contain. Remove it and call again.")
    if len(path) > MAX_PATH_CHARS:
        raise InvalidPathError(f"{what} is {len(path)} characters long; the limit is "
                               f"{MAX_PATH_CHARS}.")
    return path


def absolute_path(path: str, working_dir: str | os.PathLike[str] | None) -> str:
    """``~`` expanded and joined to the working dir, not yet resolved (symlinks kept)."""
    check_path_text(path)
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        if working_dir is None:
            raise InvalidPathError(f"Relative path {path!r} cannot be resolved without a "
                                   "working directory; give an absolute path.")
        expanded = os.path.join(os.fspath(working_dir), expanded)
    return expanded


def resolve_path(path: str, working_dir: str | os.PathLike[str] | None) -> Path:
    """The real absolute path: ``..`` and every symlink that exists resolved."""
    absolute = absolute_path(path, working_dir)
    try:
        return Path(os.path.realpath(absolute))
    except OSError as exc:  # a symlink replaced while realpath was reading it
        raise FsError(f"{printable(path)} could not be resolved (it changed while being read: "
                      f"{exc.strerror or exc}). Try again.") from None


def resolve_for_subject(path: str, working_dir: str | os.PathLike[str] | None) -> str:
    """The permission subject of a path argument: the resolved absolute path.

    Rules match what a call really touches, so ``doc/link`` pointing to ``/etc/passwd`` is
    judged as ``/etc/passwd``. Raises ``InvalidPathError`` for unusable paths.
    """
    return str(resolve_path(path, working_dir))


def is_within(path: Path, root: Path) -> bool:
    """Component-wise containment: ``/p/doc_evil`` is not within ``/p/doc``."""
    return path == root or root in path.parents


def display_path(path: str | os.PathLike[str], working_dir: Path) -> str:
    """Relative to the working dir when inside it (what the model passes back), else absolute."""
    p = os.fspath(path)
    wd = str(working_dir)
    if p == wd:
        return "."
    prefix = wd if wd.endswith(os.sep) else wd + os.sep
    if p.startswith(prefix):
        p = p[len(prefix):]
    return printable(p.replace(os.sep, "/") if os.sep != "/" else p)


def printable(text: str) -> str:
    """Make file names with undecodable bytes safe to put in a UTF-8 tool result."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def describe_os_error(exc: OSError, shown: str) -> str:
    """An OSError as a sentence naming the path and what to do."""
    code = exc.errno
    if code == errno.ENOENT:
        return f"{shown} does not exist."
    if code in (errno.EACCES, errno.EPERM):
        return f"Permission denied by the operating system for {shown}."
    if code == errno.ENAMETOOLONG:
        return f"{shown}: a file name in this path is too long for the filesystem."
    if code == errno.ENOSPC:
        return f"No space left on the device while writing {shown}."
    if code == errno.EROFS:
        return f"{shown} is on a read-only filesystem."
    if code == errno.ELOOP:
        return f"{shown}: too many levels of symbolic links (a symlink loop?)."
    if code == errno.ENOTDIR:
        return f"{shown}: a component of the path is not a directory."
    if code == errno.EISDIR:
        return f"{shown} is a directory."
    return f"{shown}: {exc.strerror or exc}."


# -- files -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileStamp:
    """Identity and version of a file, to notice that it changed between read and write."""

    dev: int
    ino: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileStamp:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass(frozen=True)
class WritePlan:
    """What a write would do, computed without side effects (also drives the preview)."""

    requested: str
    target: Path
    root: Path
    parts: tuple[str, ...]  # components below root; the last one is the file name
    exists: bool
    size: int | None
    missing_dirs: tuple[Path, ...]


@dataclass(frozen=True)
class WriteReport:
    target: Path
    mode: str
    bytes_written: int
    created: bool
    created_dirs: tuple[Path, ...] = ()
    previous_size: int | None = None
    other_links: int = 0  # hard links to the old inode that kept the old content


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


class _Dir:
    """A directory verified to be inside the scope: a dir fd where ``*at`` calls exist."""

    def __init__(self, path: str, fd: int | None) -> None:
        self.path = path
        self.fd = fd

    def _p(self, name: str) -> str:
        return name if self.fd is not None else os.path.join(self.path, name)

    def open(self, name: str, flags: int, mode: int = 0o666) -> int:
        flags |= _O_CLOEXEC | _O_BINARY
        if self.fd is not None:
            return os.open(name, flags, mode, dir_fd=self.fd)
        return os.open(self._p(name), flags, mode)

    def lstat(self, name: str) -> os.stat_result:
        if self.fd is not None:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        return os.lstat(self._p(name))

    def mkdir(self, name: str) -> None:
        if self.fd is not None:
            os.mkdir(name, 0o777, dir_fd=self.fd)
        else:
            os.mkdir(self._p(name), 0o777)

    def rmdir(self, name: str) -> None:
        if self.fd is not None:
            os.rmdir(name, dir_fd=self.fd)
        else:
            os.rmdir(self._p(name))

    def unlink(self, name: str) -> None:
        if self.fd is not None:
            os.unlink(name, dir_fd=self.fd)
        else:
            os.unlink(self._p(name))

    def rename(self, src: str, dst: str) -> None:
        if self.fd is not None:
            os.rename(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        else:
            os.replace(self._p(src), self._p(dst))

    def writable(self, name: str) -> bool:
        if self.fd is not None:
            return os.access(name, os.W_OK, dir_fd=self.fd, follow_symlinks=False)
        return os.access(self._p(name), os.W_OK)

    def enter(self, name: str) -> _Dir:
        """Open a child directory without following a symlink in its place."""
        child = os.path.join(self.path, name)
        if self.fd is not None:
            try:
                fd = os.open(name, _O_DIRFD | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC,
                             dir_fd=self.fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    self._refuse_non_dir(name, child)
                raise
            try:
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    raise FsError(f"{child} is not a directory.")
            except BaseException:
                os.close(fd)
                raise
            return _Dir(child, fd)
        st = os.lstat(child)
        if not stat.S_ISDIR(st.st_mode):
            self._refuse_non_dir(name, child)
        return _Dir(child, None)

    def _refuse_non_dir(self, name: str, child: str) -> None:
        try:
            st = self.lstat(name)
        except OSError:
            return
        if stat.S_ISLNK(st.st_mode):
            raise OutsideScopeError(
                f"Refused: {printable(child)} is a symbolic link where a real directory was "
                "checked (it changed during the call); writes never follow it. Nothing was "
                "written.")
        if not stat.S_ISDIR(st.st_mode):
            raise FsError(f"{printable(child)} is not a directory.")

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


def _split_abs(path: Path) -> tuple[str, list[str]]:
    anchor = path.anchor or os.sep
    return anchor, [p for p in path.parts[1:] if p]


class ScopedFs:
    """All file access of the file tools. Reads are unrestricted; writes are confined."""

    def __init__(self, working_dir: str | os.PathLike[str],
                 allowed_write_dirs: Sequence[str | os.PathLike[str]] = (), *,
                 resolved: bool = False) -> None:
        if resolved:  # ToolContext already resolved them; no filesystem calls here
            self.working_dir = Path(working_dir)
            roots = [Path(d) for d in allowed_write_dirs]
        else:
            self.working_dir = Path(os.path.realpath(os.path.expanduser(os.fspath(working_dir))))
            roots = [resolve_path(os.fspath(d), self.working_dir) for d in allowed_write_dirs]
        # Deepest first, so a nested allowed dir is the one reported.
        self.allowed_write_dirs: tuple[Path, ...] = tuple(
            sorted(dict.fromkeys(roots), key=lambda p: len(p.parts), reverse=True))

    @classmethod
    def from_context(cls, ctx: Any) -> ScopedFs:
        """The ScopedFs of a call; ToolContext has resolved its paths (so this never blocks)."""
        return cls(ctx.working_dir, ctx.allowed_write_dirs, resolved=True)

    # -- paths -------------------------------------------------------------------------------

    def resolve(self, path: str) -> Path:
        return resolve_path(path, self.working_dir)

    def display(self, path: str | os.PathLike[str]) -> str:
        return display_path(path, self.working_dir)

    # -- reads (unrestricted) ---------------------------------------------------------------

    def stat(self, path: Path) -> os.stat_result:
        try:
            return os.stat(path)
        except FileNotFoundError:
            raise NotFoundError(f"{self.display(path)} does not exist.") from None
        except OSError as exc:
            raise FsError(describe_os_error(exc, self.display(path))) from None

    def open_file(self, path: Path) -> tuple[BinaryIO, os.stat_result]:
        """Open a regular file for reading; FIFOs and devices are refused, never blocked on."""
        shown = self.display(path)
        try:
            fd = os.open(path, os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY)
        except FileNotFoundError:
            raise NotFoundError(f"{shown} does not exist.") from None
        except IsADirectoryError:
            raise IsADirectoryFsError(f"{shown} is a directory, not a file.") from None
        except OSError as exc:
            raise FsError(describe_os_error(exc, shown)) from None
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryFsError(f"{shown} is a directory, not a file.")
            if not stat.S_ISREG(st.st_mode):
                raise FsError(f"{shown} is not a regular file (a device, FIFO or socket); "
                              "it cannot be read as text.")
            if _O_NONBLOCK:
                os.set_blocking(fd, True)
            return os.fdopen(fd, "rb"), st
        except BaseException:
            os.close(fd)
            raise

    def list_names(self, directory: Path) -> list[str]:
        """Names in a directory, or [] when it cannot be listed (used for suggestions)."""
        try:
            return os.listdir(directory)
        except OSError:
            return []

    def read_bytes(self, path: Path) -> tuple[bytes, FileStamp]:
        f, st = self.open_file(path)
        with f:
            try:
                data = f.read()
            except OSError as exc:
                raise FsError(describe_os_error(exc, self.display(path))) from None
        return data, FileStamp.of(st)

    # -- writes (confined) ------------------------------------------------------------------

    def check_write(self, path: str, mode: str = "overwrite",
                    create_dirs: bool = False) -> WritePlan:
        """Decide whether a write may happen, without touching anything. Raises FsError."""
        if mode not in WRITE_MODES:
            raise FsError(f"Unknown mode {mode!r}; use one of {', '.join(WRITE_MODES)}.")
        check_path_text(path)
        stripped = path.rstrip("/" + os.sep)
        if path != stripped or os.path.basename(stripped) in (".", "..", "~"):
            raise InvalidPathError(f"{path!r} names a directory, not a file. Give the path of "
                                   "the file to write, e.g. 'doc/notes.md'.")
        if not self.allowed_write_dirs:
            raise OutsideScopeError(
                "File writing is disabled: no allowed write directories are configured for this "
                "tool. Ask the person to add one in the tool's Configure dialog.")
        target = self.resolve(path)
        root = next((r for r in self.allowed_write_dirs if is_within(target, r)), None)
        if root is None:
            allowed = ", ".join(self.display(r) for r in self.allowed_write_dirs)
            via = "" if os.path.normpath(absolute_path(path, self.working_dir)) == str(target) \
                else f" (resolves to {printable(str(target))})"
            raise OutsideScopeError(
                f"Refused: {printable(path)}{via} is outside the allowed write directories "
                f"({allowed}). Write to a path inside one of them.")
        if target == root:
            raise IsADirectoryFsError(f"{self.display(target)} is an allowed write directory "
                                      "itself; give a file path inside it.")
        parts = target.relative_to(root).parts
        # What exists now (informative only; the write re-checks everything through dir fds).
        missing: list[Path] = []
        cur = root
        for name in (None, *parts[:-1]):
            if name is not None:
                cur = cur / name
            try:
                st = os.lstat(cur)
            except FileNotFoundError:
                missing.append(cur)
                continue
            except OSError as exc:
                raise FsError(describe_os_error(exc, self.display(cur))) from None
            if missing or not stat.S_ISDIR(st.st_mode):
                raise FsError(f"{self.display(cur)} exists but is not a directory, so "
                              f"{self.display(target)} cannot be created there.")
        if missing and not create_dirs:
            raise NotFoundError(
                f"The directory {self.display(missing[0])} does not exist. Call again with "
                "create_dirs=true to create it (inside the allowed directory).")
        exists, size = False, None
        if not missing:
            try:
                st = os.lstat(target)
                exists, size = True, st.st_size
                if stat.S_ISDIR(st.st_mode):
                    raise IsADirectoryFsError(f"{self.display(target)} is a directory; give "
                                              "the path of a file.")
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise FsError(describe_os_error(exc, self.display(target))) from None
        if exists and mode == "create":
            raise WriteConflictError(
                f"{self.display(target)} already exists. Use mode 'overwrite' to replace it, "
                "'append' to add to it, or edit_file to change part of it.")
        return WritePlan(path, target, root, parts, exists, size, tuple(missing))

    def write_bytes(self, path: str, data: bytes, mode: str = "overwrite", *,
                    create_dirs: bool = False, expect: FileStamp | None = None) -> WriteReport:
        """Write inside the scope, or raise FsError having changed nothing outside it.

        ``expect`` (edit_file) makes the overwrite fail if the file is no longer the one read.
        """
        plan = self.check_write(path, mode, create_dirs)
        return self._execute_write(plan, data, mode, create_dirs=create_dirs, expect=expect)

    def _execute_write(self, plan: WritePlan, data: bytes, mode: str, *, create_dirs: bool,
                       expect: FileStamp | None = None) -> WriteReport:
        opened: list[_Dir] = []
        created: list[tuple[_Dir, str, Path]] = []
        shown = self.display(plan.target)
        try:
            cur = self._open_root(plan.root, create_dirs, opened, created)
            here = plan.root
            for name in plan.parts[:-1]:
                here = here / name
                cur = self._enter_or_create(cur, name, here, create_dirs, created)
                opened.append(cur)
            leaf = plan.parts[-1]
            if mode == "create":
                report = self._create(cur, leaf, data, plan.target)
            elif mode == "append":
                report = self._append(cur, leaf, data, plan.target)
            else:
                report = self._overwrite(cur, leaf, data, plan.target, expect)
        except BaseException as exc:
            for parent, name, _ in reversed(created):  # leave no empty dirs behind a failure
                with contextlib.suppress(OSError):
                    parent.rmdir(name)
            if isinstance(exc, OSError):
                raise FsError(describe_os_error(exc, shown)) from None
            raise
        finally:
            for d in opened:
                d.close()
        return WriteReport(report.target, mode, report.bytes_written, report.created,
                           tuple(p for _, _, p in created), report.previous_size,
                           report.other_links)

    def _open_root(self, root: Path, create_dirs: bool, opened: list[_Dir],
                   created: list[tuple[_Dir, str, Path]]) -> _Dir:
        """Walk from ``/`` to the allowed dir without following any symlink on the way."""
        anchor, parts = _split_abs(root)
        if HAVE_DIR_FD:
            cur = _Dir(anchor, os.open(anchor, _O_DIRFD | _O_DIRECTORY | _O_CLOEXEC))
        else:
            cur = _Dir(anchor, None)
        opened.append(cur)
        here = Path(anchor)
        for i, name in enumerate(parts):
            here = here / name
            last = i == len(parts) - 1
            try:
                cur = cur.enter(name)
            except FileNotFoundError:
                if not (last and create_dirs):
                    raise NotFoundError(
                        f"The allowed write directory {self.display(root)} does not exist"
                        + ("." if last else f" ({here} is missing).")
                        + (" Call again with create_dirs=true to create it." if last else "")
                    ) from None
                cur = self._enter_or_create(cur, name, here, True, created)
            opened.append(cur)
        return cur

    def _enter_or_create(self, parent: _Dir, name: str, here: Path, create_dirs: bool,
                         created: list[tuple[_Dir, str, Path]]) -> _Dir:
        try:
            return parent.enter(name)
        except FileNotFoundError:
            if not create_dirs:
                raise NotFoundError(
                    f"The directory {self.display(here)} does not exist. Call again with "
                    "create_dirs=true to create it.") from None
        try:
            parent.mkdir(name)
            created.append((parent, name, here))
        except FileExistsError:
            pass  # created concurrently; enter() below still refuses a symlink
        return parent.enter(name)

    def _create(self, d: _Dir, leaf: str, data: bytes, target: Path) -> WriteReport:
        try:
            fd = d.open(leaf, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW, 0o666)
        except FileExistsError:
            raise WriteConflictError(
                f"{self.display(target)} already exists. Use mode 'overwrite' to replace it or "
                "'append' to add to it.") from None
        try:
            _write_all(fd, data)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                d.unlink(leaf)
            raise
        os.close(fd)
        return WriteReport(target, "create", len(data), True)

    def _existing_regular(self, d: _Dir, leaf: str, target: Path) -> os.stat_result | None:
        try:
            st = d.lstat(leaf)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(st.st_mode):
            raise OutsideScopeError(f"Refused: {self.display(target)} became a symbolic link "
                                    "after the path was checked; nothing was written.")
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryFsError(f"{self.display(target)} is a directory.")
        if not stat.S_ISREG(st.st_mode):
            raise FsError(f"{self.display(target)} is not a regular file (device, FIFO or "
                          "socket); refusing to write to it.")
        # No write bit for anyone means someone made it read-only on purpose (root included).
        if not st.st_mode & 0o222 or not d.writable(leaf):
            raise FsError(f"{self.display(target)} is read-only (no write permission). "
                          "Ask the person to make it writable if it should be changed.")
        return st

    def _overwrite(self, d: _Dir, leaf: str, data: bytes, target: Path,
                   expect: FileStamp | None) -> WriteReport:
        st = self._existing_regular(d, leaf, target)
        if expect is not None and (st is None or FileStamp.of(st) != expect):
            raise WriteConflictError(f"{self.display(target)} changed after it was read; read "
                                     "it again and redo the edit.")
        self._replace_atomically(d, leaf, data, None if st is None else st.st_mode & 0o777)
        return WriteReport(target, "overwrite", len(data), st is None,
                           previous_size=None if st is None else st.st_size,
                           other_links=0 if st is None else st.st_nlink - 1)

    def _append(self, d: _Dir, leaf: str, data: bytes, target: Path) -> WriteReport:
        existed = self._existing_regular(d, leaf, target) is not None
        fd = d.open(leaf, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_NOFOLLOW | _O_NONBLOCK,
                    0o666)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise FsError(f"{self.display(target)} is not a regular file; refusing to "
                              "append to it.")
            if st.st_nlink <= 1:
                _write_all(fd, data)
                return WriteReport(target, "append", len(data), not existed,
                                   previous_size=st.st_size if existed else None)
        finally:
            os.close(fd)
        # Hard-linked: another name (maybe outside the scope) shares this inode. Copy, append
        # to the copy and rename it over our name, so only our name sees the new content.
        rfd = d.open(leaf, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK)
        try:
            old = _read_all(rfd)
        finally:
            os.close(rfd)
        self._replace_atomically(d, leaf, old + data, st.st_mode & 0o777)
        return WriteReport(target, "append", len(data), False, previous_size=len(old),
                           other_links=st.st_nlink - 1)

    def _replace_atomically(self, d: _Dir, leaf: str, data: bytes, mode: int | None) -> None:
        """Temp file in the same dir + rename: readers see old or new, never half a file."""
        for _ in range(100):
            tmp = f".{leaf[:64]}.{secrets.token_hex(6)}.tebiki-tmp"
            try:
                # New files get 0o666 minus the umask, like any editor; existing keep their mode.
                fd = d.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW,
                            0o600 if mode is not None else 0o666)
                break
            except FileExistsError:
                continue
        else:  # pragma: no cover - 100 random collisions
            raise FsError("could not create a temporary file next to the target")
        try:
            try:
                _write_all(fd, data)
                if mode is not None and hasattr(os, "fchmod"):
                    os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
            d.rename(tmp, leaf)
        except BaseException:
            with contextlib.suppress(OSError):
                d.unlink(tmp)
            raise

    # -- trees -------------------------------------------------------------------------------

    def walk(self, root: Path, **kwargs: Any) -> Iterator[WalkItem]:
        return walk_tree(str(root), **kwargs)


def read_file_fast(path: str, max_bytes: int) -> bytes | None:
    """Whole-file read tuned for searching many small files: open, one read, close.

    None when the file cannot be read or is larger than ``max_bytes``; never blocks on a FIFO.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _O_CLOEXEC | _O_NONBLOCK | _O_BINARY)
    except OSError:
        return None
    try:
        chunk = os.read(fd, 1 << 20)
        if len(chunk) < 1 << 20:
            return chunk
        parts = [chunk]
        total = len(chunk)
        while chunk:
            chunk = os.read(fd, 8 << 20)
            parts.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                return None
        return b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)


# -- .gitignore-aware walking ----------------------------------------------------------------


IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")  # later files take precedence, as in rg


def _load_gitignore(dir_path: str) -> pathspec.GitIgnoreSpec | None:
    import pathspec  # only when a folder has a .gitignore (and warmed up before runs)

    """The ignore rules of one directory: .gitignore, then .ignore and .rgignore (ripgrep's)."""
    lines: list[str] = []
    for name in IGNORE_FILES:
        try:
            with open(os.path.join(dir_path, name), "rb") as f:
                raw = f.read(1 << 20)
        except OSError:
            continue
        lines.extend(raw.decode("utf-8", "replace").splitlines())
    if not any(ln.strip() and not ln.startswith("#") for ln in lines):
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # a malformed pattern must not break searching
        return None


@dataclass(frozen=True)
class GitIgnore:
    """The ignore rules in force in one directory; deeper files override shallower ones.

    Like ripgrep (with ``--no-require-git``): .gitignore (plus .ignore and .rgignore) files of
    the ancestors apply up to and including the first one that holds a ``.git`` entry; a nested
    repository starts afresh.
    """

    levels: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()

    @classmethod
    def for_root(cls, root: str) -> GitIgnore:
        if os.path.lexists(os.path.join(root, ".git")):
            return cls()
        levels: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        cur = root
        while True:
            parent = os.path.dirname(cur)
            if parent == cur:
                break
            cur = parent
            spec = _load_gitignore(cur)
            if spec is not None:
                levels.append((cur, spec))
            if os.path.lexists(os.path.join(cur, ".git")):
                break
        levels.reverse()
        # An explicitly requested root is searched even if an ancestor ignores it (as rg does);
        # the ancestor rules that ignore it would otherwise swallow everything below it.
        kept = tuple((base, spec) for base, spec in levels
                     if not _spec_says(spec, _rel(root, base) + "/"))
        return cls(kept)

    def child(self, dir_path: str, has_git: bool) -> GitIgnore:
        spec = _load_gitignore(dir_path)
        base = () if has_git else self.levels
        if spec is None:
            return self if not has_git else GitIgnore(())
        return GitIgnore((*base, (dir_path, spec)))

    def ignored(self, path: str, is_dir: bool) -> bool:
        for base, spec in reversed(self.levels):
            rel = _rel(path, base)
            verdict = spec.check_file(rel + "/" if is_dir else rel).include
            if verdict is not None:
                return bool(verdict)
        return False


def _rel(path: str, base: str) -> str:
    rel = path[len(base):].lstrip("/" + os.sep)
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


def _spec_says(spec: pathspec.GitIgnoreSpec, rel: str) -> bool:
    return bool(spec.check_file(rel).include)


@dataclass(frozen=True)
class WalkItem:
    path: str  # absolute
    rel: str  # relative to the walk root, "/"-separated
    is_dir: bool
    is_symlink: bool
    entry: os.DirEntry[str]


@dataclass
class WalkStats:
    errors: list[str] = field(default_factory=list)
    stopped: str | None = None


Override = Callable[[str, bool], "bool | None"]


def walk_tree(root: str, *, gitignore: bool = True, override: Override | None = None,
              max_depth: int | None = None, stats: WalkStats | None = None,
              cancel: threading.Event | None = None,
              descend: Callable[[str], bool] | None = None) -> Iterator[WalkItem]:
    """Yield every entry below ``root`` that .gitignore does not exclude; never enters .git.

    Symlinked directories are reported but not entered (no loops, no escaping the tree).
    ``override(rel, is_dir)`` returns True (include, ignore rules notwithstanding), False
    (exclude) or None (let .gitignore decide), like ripgrep's ``--glob``.
    """
    stats = stats if stats is not None else WalkStats()
    base_rules = GitIgnore.for_root(root) if gitignore else GitIgnore()
    stack: list[tuple[str, str, GitIgnore, int]] = [(root, "", base_rules, 1)]
    while stack:
        if cancel is not None and cancel.is_set():
            stats.stopped = "cancelled"
            return
        dir_path, dir_rel, rules, depth = stack.pop()
        try:
            with os.scandir(dir_path) as it:
                entries = list(it)
        except OSError as exc:
            stats.errors.append(describe_os_error(exc, dir_path))
            continue
        if gitignore:
            has_git = any(e.name == ".git" for e in entries)
            # The root's own .git was handled by GitIgnore.for_root.
            rules = rules.child(dir_path, has_git and dir_path != root)
        subdirs = []
        for entry in entries:
            name = entry.name
            if name == ".git":
                continue
            rel = f"{dir_rel}/{name}" if dir_rel else name
            try:
                is_symlink = entry.is_symlink()
                is_dir = not is_symlink and entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            verdict = override(rel, is_dir) if override is not None else None
            if verdict is False:
                continue
            if verdict is None and rules.levels and rules.ignored(entry.path, is_dir):
                continue
            yield WalkItem(entry.path, rel, is_dir, is_symlink, entry)
            if is_dir and (max_depth is None or depth < max_depth) and (
                    descend is None or descend(rel)):
                subdirs.append((entry.path, rel, rules, depth + 1))
        stack.extend(reversed(subdirs))


# -- globs -----------------------------------------------------------------------------------

_GLOB_MAGIC = re.compile(r"[*?\[{]")


def has_glob_magic(text: str) -> bool:
    return _GLOB_MAGIC.search(text) is not None


def glob_to_regex(pattern: str) -> str:
    """Translate a glob to a regex over '/'-separated relative paths.

    ``*`` and ``?`` stay inside one folder, ``**`` as a whole component crosses folders
    (``**/x`` also matches ``x``), ``[abc]``/``[!abc]`` are classes, ``{a,b}`` alternatives.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                at_start = i == 0 or pattern[i - 1] == "/"
                j = i + 2
                if at_start and (j == n or pattern[j] == "/"):
                    if j == n:
                        out.append(".*")
                        i = j
                    else:
                        out.append("(?:.*/)?")
                        i = j + 1
                    continue
                out.append("[^/]*")
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                neg = body[:1] in ("!", "^")
                if neg:
                    body = body[1:]
                body = body.replace("\\", "\\\\").replace("[", "\\[")
                out.append(f"[^/{body}]" if neg else f"[{body}]")
                i = j
        elif c == "{":
            close = _matching_brace(pattern, i)
            if close is None:
                out.append(re.escape(c))
            else:
                depth += 1
                out.append("(?:")
        elif c == "," and depth:
            out.append("|")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _matching_brace(pattern: str, start: int) -> int | None:
    level = 0
    i = start
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            level += 1
        elif ch == "}":
            level -= 1
            if level == 0:
                return i
        i += 1
    return None


def compile_glob(pattern: str) -> re.Pattern[str]:
    return re.compile(glob_to_regex(pattern), re.DOTALL)


def gitignore_style_matcher(pattern: str) -> Callable[[str, bool], bool]:
    """Match like a ripgrep ``--glob``: no '/' → any depth by name; with '/' → from the root."""
    dir_only = pattern.endswith("/")
    body = pattern.rstrip("/")
    if body.startswith("/"):
        rx = compile_glob(body.lstrip("/"))
    elif "/" in body:
        rx = compile_glob(body)
    else:
        rx = re.compile("(?:.*/)?" + glob_to_regex(body), re.DOTALL)

    def matches(rel: str, is_dir: bool) -> bool:
        if dir_only and not is_dir:
            return False
        return rx.fullmatch(rel) is not None

    return matches


# -- tool argument helpers (shared by the file tools) ---------------------------------------


class ToolInputError(ValueError):
    """A bad argument, with a message telling the model how to fix the call."""


def arg_str(args: Mapping[str, Any], name: str, default: str | None = None, *,
            required: bool = False, allow_empty: bool = True) -> str | None:
    value = args.get(name, default)
    if value is None:
        if required:
            raise ToolInputError(f"Missing required parameter '{name}'.")
        return None
    if not isinstance(value, str):
        raise ToolInputError(f"Parameter '{name}' must be a string, got "
                             f"{type(value).__name__}.")
    if not allow_empty and value == "":
        raise ToolInputError(f"Parameter '{name}' must not be empty.")
    return value


def arg_int(args: Mapping[str, Any], name: str, default: int | None, *, minimum: int = 0,
            maximum: int | None = None) -> int | None:
    value = args.get(name, default)
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or not math.isfinite(value) or value != int(value)):
        raise ToolInputError(f"Parameter '{name}' must be an integer, got {value!r}.")
    value = int(value)
    if value < minimum:
        raise ToolInputError(f"Parameter '{name}' must be at least {minimum}, got {value}.")
    if maximum is not None and value > maximum:
        raise ToolInputError(f"Parameter '{name}' must be at most {maximum}, got {value}.")
    return value


def arg_bool(args: Mapping[str, Any], name: str, default: bool) -> bool:
    value = args.get(name, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ToolInputError(f"Parameter '{name}' must be true or false, got {value!r}.")
    return value


def unknown_args(args: Mapping[str, Any], allowed: Sequence[str]) -> None:
    extra = sorted(set(args) - set(allowed))
    if extra:
        raise ToolInputError(f"Unknown parameter(s): {', '.join(extra)}. Allowed: "
                             f"{', '.join(allowed)}.")


def path_subjects(key: str, default: str | None = None) -> Callable[[Mapping[str, Any],
                                                                      Path | None], list[str]]:
    """A ToolSpec ``subjects_fn`` whose subject is the resolved path in ``args[key]``."""

    def subjects(args: Mapping[str, Any], working_dir: Path | None) -> list[str]:
        raw = args.get(key, default)
        if raw is None and default is None:
            raise SubjectError(f"missing '{key}'")
        try:
            return [resolve_for_subject(raw, working_dir)]
        except FsError as exc:
            partial = [raw] if isinstance(raw, str) and "\x00" not in raw else []
            raise SubjectError(str(exc), partial) from None

    return subjects
