"""Race-safe execution of a write that ``ScopedFs.check_write`` has already allowed.

1. The write walks from ``/`` to the target one directory at a time through directory file
   descriptors opened with ``O_NOFOLLOW``. If anything was swapped for a symlink after the
   check, the walk fails instead of following it, so the check and the write cannot be raced
   apart. Missing directories (``create_dirs``) are created one by one *inside* the scope during
   that walk, never before the check.
2. The final file is touched only through the verified directory fd: ``O_EXCL`` for create,
   a temporary file + ``rename`` for overwrite and edit (atomic, mode preserved, and a hard link
   to a file elsewhere keeps its old content because the rename gives the name a new inode),
   ``O_APPEND|O_NOFOLLOW`` for append. A file with more than one hard link is never appended to
   in place: we copy it, append to the copy and rename it over the name (copy-then-replace), so
   the other names (which may lie outside the scope) keep their content.

On systems without ``*at`` calls (Windows) the same steps run on paths with ``lstat`` checks;
that closes every static escape but not a deliberate race.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.tools.fs.errors import (
    FsError,
    IsADirectoryFsError,
    NotFoundError,
    OutsideScopeError,
    WriteConflictError,
)
from app.core.tools.fs.paths import describe_os_error, printable

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


class DirFdWriter:
    """Carries out checked writes; ``display`` names paths in messages as the model sees them."""

    def __init__(self, display: Callable[[str | os.PathLike[str]], str]) -> None:
        self.display = display

    def execute(self, plan: WritePlan, data: bytes, mode: str, *, create_dirs: bool,
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
