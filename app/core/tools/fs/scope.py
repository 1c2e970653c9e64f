"""ScopedFs: the one door between the file tools and the filesystem.

Reads are free. Every write (create, overwrite, append, edit, mkdir) is checked *structurally*
against the allowed write dirs, because a string comparison such as ``path.startswith(allowed)``
is what an earlier design's review showed to be escapable: the requested path is made
absolute (``~`` expanded, relative paths joined to the working dir) and resolved with
``realpath`` (``..`` chains and symlinks followed, so a symlink inside the scope that leads
outside *is* outside); the result must lie inside an allowed dir component-wise. The checked
write is then carried out by ``writer.DirFdWriter``, which re-verifies every directory on the
way without following symlinks, so the check and the write cannot be raced apart.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Literal

from app.core.tools.capability_lift import CapabilityLift, LiftProposer
from app.core.tools.fs.errors import (
    FsError,
    InvalidPathError,
    IsADirectoryFsError,
    NotFoundError,
    OutsideScopeError,
    ProtectedPathError,
    WriteConflictError,
)
from app.core.tools.fs.paths import (
    absolute_path,
    check_path_text,
    describe_os_error,
    display_path,
    is_within,
    printable,
    resolve_path,
)
from app.core.tools.fs.walker import WalkItem, walk_tree
from app.core.tools.fs.writer import (
    _O_BINARY,
    _O_CLOEXEC,
    _O_NONBLOCK,
    DirFdWriter,
    FileStamp,
    WritePlan,
    WriteReport,
)

WriteMode = Literal["create", "overwrite", "append"]
WRITE_MODES: tuple[str, ...] = ("create", "overwrite", "append")


class ScopedFs:
    """All file access of the file tools. Reads are unrestricted; writes are confined."""

    def __init__(self, project_root: str | os.PathLike[str],
                 allowed_write_dirs: Sequence[str | os.PathLike[str]] = (), *,
                 resolved: bool = False, protected: Sequence[Path] = ()) -> None:
        if resolved:  # ToolContext already resolved them; no filesystem calls here
            self.project_root = Path(project_root)
            roots = [Path(d) for d in allowed_write_dirs]
        else:
            self.project_root = Path(os.path.realpath(os.path.expanduser(os.fspath(project_root))))
            roots = [resolve_path(os.fspath(d), self.project_root) for d in allowed_write_dirs]
        # Deepest first, so a nested allowed dir is the one reported.
        self.allowed_write_dirs: tuple[Path, ...] = tuple(
            sorted(dict.fromkeys(roots), key=lambda p: len(p.parts), reverse=True))
        # Paths no write may touch (ToolContext.protected: what the call's checkpoint does
        # not record, for a call that runs unasked).
        self.protected: tuple[Path, ...] = tuple(protected)

    @classmethod
    def from_context(cls, ctx: Any) -> ScopedFs:
        """The ScopedFs of a call; ToolContext has resolved its paths (so this never blocks)."""
        return cls(ctx.project_root, ctx.allowed_write_dirs, resolved=True,
                   protected=getattr(ctx, "protected", ()))

    # -- paths -------------------------------------------------------------------------------

    def resolve(self, path: str) -> Path:
        return resolve_path(path, self.project_root)

    def display(self, path: str | os.PathLike[str]) -> str:
        return display_path(path, self.project_root)

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
        _check_names_a_file(path)
        if not self.allowed_write_dirs:
            raise OutsideScopeError(
                "File writing is disabled: no allowed write directories are configured for this "
                "tool. Ask the person to add one in the tool's Configure dialog.")
        target = self.resolve(path)
        root = self._write_root(path, target)
        self._refuse_protected(target)
        if target == root:
            raise IsADirectoryFsError(f"{self.display(target)} is an allowed write directory "
                                      "itself; give a file path inside it.")
        parts = target.relative_to(root).parts
        missing = self._missing_folders(root, target, parts)
        if missing and not create_dirs:
            raise NotFoundError(
                f"The directory {self.display(missing[0])} does not exist. Call again with "
                "create_dirs=true to create it (inside the allowed directory).")
        exists, size = (False, None) if missing else self._existing_file(target)
        if exists and mode == "create":
            raise WriteConflictError(
                f"{self.display(target)} already exists. Use mode 'overwrite' to replace it, "
                "'append' to add to it, or edit_file to change part of it.")
        return WritePlan(path, target, root, parts, exists, size, tuple(missing))

    def _write_root(self, path: str, target: Path) -> Path:
        """The (deepest) allowed write dir holding ``target``; OutsideScopeError when none."""
        root = next((r for r in self.allowed_write_dirs if is_within(target, r)), None)
        if root is not None:
            return root
        allowed = ", ".join(self.display(r) for r in self.allowed_write_dirs)
        via = "" if os.path.normpath(absolute_path(path, self.project_root)) == str(target) \
            else f" (resolves to {printable(str(target))})"
        raise OutsideScopeError(
            f"Refused: {printable(path)}{via} is outside the allowed write directories "
            f"({allowed}). Write to a path inside one of them.")

    def _refuse_protected(self, target: Path) -> None:
        shielded = next((p for p in self.protected if is_within(target, p)), None)
        if shielded is not None:
            raise ProtectedPathError(
                f"Refused: {self.display(target)} is read-only to this call: checkpoints do "
                f"not record {self.display(shielded)} (ignored, too large, special, or a "
                "repository of its own), so undo could not bring it back. Only a call the "
                "person approves may change it; calling again will ask them.")

    def _missing_folders(self, root: Path, target: Path, parts: tuple[str, ...]) -> list[Path]:
        """The folders on the way from ``root`` to ``target`` that do not exist yet (what exists
        now is informative only: the write re-checks everything through dir fds). FsError when
        something on the way is not a folder."""
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
        return missing

    def _existing_file(self, target: Path) -> tuple[bool, int | None]:
        """(exists, size) of what is at ``target`` now; IsADirectoryFsError for a folder."""
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            return False, None
        except OSError as exc:
            raise FsError(describe_os_error(exc, self.display(target))) from None
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryFsError(f"{self.display(target)} is a directory; give the path "
                                      "of a file.")
        return True, st.st_size

    def write_bytes(self, path: str, data: bytes, mode: str = "overwrite", *,
                    create_dirs: bool = False, expect: FileStamp | None = None) -> WriteReport:
        """Write inside the scope, or raise FsError having changed nothing outside it.

        ``expect`` (edit_file) makes the overwrite fail if the file is no longer the one read.
        """
        plan = self.check_write(path, mode, create_dirs)
        return self._execute_write(plan, data, mode, create_dirs=create_dirs, expect=expect)

    def _execute_write(self, plan: WritePlan, data: bytes, mode: str, *, create_dirs: bool,
                       expect: FileStamp | None = None) -> WriteReport:
        # Kept as the seam between check and execution: the race tests call it with a plan
        # whose directories they swapped for symlinks in between.
        return DirFdWriter(self.display).execute(plan, data, mode, create_dirs=create_dirs,
                                                 expect=expect)

    # -- trees -------------------------------------------------------------------------------

    def walk(self, root: Path, **kwargs: Any) -> Iterator[WalkItem]:
        return walk_tree(str(root), **kwargs)


def _check_names_a_file(path: str) -> None:
    """InvalidPathError unless ``path`` is well-formed text naming a file (not ending in a
    separator, ".", ".." or "~")."""
    check_path_text(path)
    stripped = path.rstrip("/" + os.sep)
    if path != stripped or os.path.basename(stripped) in (".", "..", "~"):
        raise InvalidPathError(f"{path!r} names a directory, not a file. Give the path of "
                               "the file to write, e.g. 'doc/notes.md'.")


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


def write_scope_refusal(key: str = "path") -> Callable[[Mapping[str, Any], Any], str | None]:
    """A ToolSpec ``capability_refusal`` for a tool that writes ``args[key]``: why the write
    folders configured for it cannot hold that path (none configured, or outside them), else
    None. Other problems (a missing folder, a changed file) are the tool's to report."""

    def refusal(args: Mapping[str, Any], ctx: Any) -> str | None:
        path, fs = _written_path(args, key, ctx)
        if path is None:
            return None
        try:
            fs.check_write(path, create_dirs=True)
        except OutsideScopeError as exc:
            return str(exc) + _lift_hint(fs, path)
        except FsError:
            return None
        return None

    return refusal


def write_scope_lift(key: str = "path") -> LiftProposer:
    """A ToolSpec ``capability_lift`` for a tool that writes ``args[key]``: add the project
    folder that holds the path (its first folder below the project, or the project itself) to
    the tool's write folders. None outside the project: no write folder may lie there."""

    def lift(args: Mapping[str, Any], ctx: Any) -> CapabilityLift | None:
        path, fs = _written_path(args, key, ctx)
        if path is None:
            return None
        try:
            target = fs.resolve(path)
        except FsError:
            return None
        root = fs.project_root
        if not is_within(target, root) or target == root:
            return None
        parts = target.relative_to(root).parts
        folder = parts[0] if len(parts) > 1 else "."
        current = [_relative_dir(d, root) for d in ctx.allowed_write_dirs]
        if folder in current:
            return None
        shown = "the whole project" if folder == "." else f"“{folder}”"
        return CapabilityLift("allowed_write_dirs", (*current, folder),
                              f"add {shown} to Write folders")

    return lift


def _written_path(args: Mapping[str, Any], key: str, ctx: Any) -> tuple[str | None, ScopedFs]:
    path = args.get(key)
    return (path if isinstance(path, str) else None), ScopedFs.from_context(ctx)


def _relative_dir(folder: Path, root: Path) -> str:
    """How a resolved write folder is written in the configuration."""
    if folder == root:
        return "."
    return str(folder.relative_to(root)) if is_within(folder, root) else str(folder)


def _lift_hint(fs: ScopedFs, path: str) -> str:
    """Which Configure setting lifts a refusal of a path inside the project (None outside)."""
    try:
        target = fs.resolve(path)
    except FsError:
        return ""
    if not is_within(target, fs.project_root):
        return ""
    return (" The person can allow it in this tool's Configure… dialog: add \".\" (the whole "
            "project) or a folder holding this file to Write folders.")
