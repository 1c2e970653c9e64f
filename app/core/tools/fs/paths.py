"""Path text: rejecting unusable strings, resolving, containment and display.

Resolution follows ``..`` and every symlink (``realpath``), so a link inside a folder that
leads outside it *is* outside; containment is compared component-wise, never as a string
prefix (``doc`` never admits ``doc_evil``).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from app.core.tools.fs.errors import FsError, InvalidPathError
from app.core.visible_text import make_visible

MAX_PATH_CHARS = 4096


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


def absolute_path(path: str, project_root: str | os.PathLike[str] | None) -> str:
    """``~`` expanded and joined to the working dir, not yet resolved (symlinks kept)."""
    check_path_text(path)
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        if project_root is None:
            raise InvalidPathError(f"Relative path {path!r} cannot be resolved without a "
                                   "working directory; give an absolute path.")
        expanded = os.path.join(os.fspath(project_root), expanded)
    return expanded


def resolve_path(path: str, project_root: str | os.PathLike[str] | None) -> Path:
    """The real absolute path: ``..`` and every symlink that exists resolved."""
    absolute = absolute_path(path, project_root)
    try:
        return Path(os.path.realpath(absolute))
    except OSError as exc:  # a symlink replaced while realpath was reading it
        raise FsError(f"{printable(path)} could not be resolved (it changed while being read: "
                      f"{exc.strerror or exc}). Try again.") from None


def resolve_for_subject(path: str, project_root: str | os.PathLike[str] | None) -> str:
    """The permission subject of a path argument: the resolved absolute path.

    Rules match what a call really touches, so ``doc/link`` pointing to ``/etc/passwd`` is
    judged as ``/etc/passwd``. Raises ``InvalidPathError`` for unusable paths.
    """
    return str(resolve_path(path, project_root))


def is_within(path: Path, root: Path) -> bool:
    """Component-wise containment: ``/p/doc_evil`` is not within ``/p/doc``."""
    return path == root or root in path.parents


def display_path(path: str | os.PathLike[str], project_root: Path) -> str:
    """Relative to the working dir when inside it (what the model passes back), else absolute."""
    p = os.fspath(path)
    wd = str(project_root)
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


def visible_name(path: str) -> str:
    """A path as it is printed in a tool result, so a person reads the name that exists.

    make_visible marks ANSI escapes, bidi overrides and zero-width characters; in a name, a
    newline, tab or carriage return must be marked too (make_visible keeps them as text), or
    ``a\nb.py`` would read as two files. Undecodable bytes become U+FFFD first (printable).
    """
    if "\n" in path or "\t" in path or "\r" in path:
        path = path.replace("\r", "⟦CR⟧").replace("\n", "⟦LF⟧").replace("\t", "⟦TAB⟧")
    return make_visible(printable(path))
