"""Reading a file that comes with a project, on the host, without ever blocking on it.

A project is content someone else may have written: its ``.tebiki/tools.toml``, its
``.gitignore`` or a file the person drops as an attachment may be a FIFO (``open()`` waits for
a writer forever, freezing the GUI or a tool), a device (``/dev/zero``: an endless read), a
socket, or a symlink to any of those. Every host-side reader of project files goes through
:func:`read_project_file`: ``O_NONBLOCK`` so the open itself returns at once, ``fstat`` on the
opened descriptor (not the name, so the check and the read are about the same file) refusing
anything but a regular file, and a bounded read. Problems are one typed exception,
:class:`UnsafeReadError`, whose message names the file and says what is wrong.
"""

from __future__ import annotations

import errno
import os
import stat

_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation

DEFAULT_MAX_BYTES = 1 << 20


class UnsafeReadError(OSError):
    """A project file that could not be read safely; ``str()`` is a sentence for a person.

    An OSError, so callers that already treat "cannot read" as OSError keep working;
    ``errno`` is set where the cause was the operating system's (ENOENT for a missing file).
    """

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.errno = code

    def __str__(self) -> str:
        return self.message


class FileMissingError(UnsafeReadError):
    """The file does not exist (often not a problem: most projects have no tools.toml)."""


class NotRegularFileError(UnsafeReadError):
    """A FIFO, device, socket or directory where a file was expected."""


class FileTooLargeError(UnsafeReadError):
    """Larger than the caller's limit; nothing was returned."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_project_file(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES,
                      follow_symlinks: bool = True, too_large: str = "refuse") -> bytes:
    """The bytes of the regular file at ``path``, read without blocking on what it really is.

    ``follow_symlinks=False`` refuses a symlink as the last component (``O_NOFOLLOW``), for files
    whose link must not lead elsewhere. ``too_large``: ``"refuse"`` raises FileTooLargeError
    when the file holds more than ``max_bytes``; ``"truncate"`` returns its first ``max_bytes``.
    Raises UnsafeReadError (or a subclass) with a message naming the file.
    """
    shown = os.fspath(path)
    fd = _open_without_blocking(path, shown, follow_symlinks)
    try:
        data = _read_regular_file(fd, shown, max_bytes, refuse_large=too_large == "refuse")
    except UnsafeReadError:
        raise
    except OSError as exc:
        raise _cannot_read(shown, exc) from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        if too_large == "refuse":  # it grew while we read it
            raise _too_large(shown, max_bytes)
        data = data[:max_bytes]
    return data


def _open_without_blocking(path: str | os.PathLike[str], shown: str,
                           follow_symlinks: bool) -> int:
    """A descriptor opened ``O_NONBLOCK`` (a FIFO or device does not make the open wait)."""
    flags = os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY
    if not follow_symlinks:
        flags |= _O_NOFOLLOW
    try:
        return os.open(path, flags)
    except FileNotFoundError:
        raise FileMissingError(f"{shown} does not exist.", errno.ENOENT) from None
    except IsADirectoryError:
        raise NotRegularFileError(f"{shown} is a directory, not a file.", errno.EISDIR) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise NotRegularFileError(f"{shown} is a symbolic link; it is not followed.",
                                      errno.ELOOP) from None
        if exc.errno == errno.ENXIO:  # a socket (or a FIFO on some systems) opened O_NONBLOCK
            raise NotRegularFileError(f"{shown} is not a regular file; it was not read.",
                                      exc.errno) from None
        raise _cannot_read(shown, exc) from None


def _read_regular_file(fd: int, shown: str, max_bytes: int, *, refuse_large: bool) -> bytes:
    """Up to ``max_bytes + 1`` bytes (one more: the file is too large) of what ``fd`` is
    open on, when ``fstat`` says it is a regular file (and not too large, ``refuse_large``)."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFileError(f"{shown} is {_kind(st.st_mode)}, not a regular file; "
                                  "it was not read.")
    if refuse_large and st.st_size > max_bytes:
        raise _too_large(shown, max_bytes)
    if _O_NONBLOCK:
        os.set_blocking(fd, True)  # a regular file: reads never wait on anyone
    chunks: list[bytes] = []
    left = max_bytes + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _cannot_read(shown: str, exc: OSError) -> UnsafeReadError:
    return UnsafeReadError(f"{shown} cannot be read: {exc.strerror or exc}.", exc.errno)


def _too_large(shown: str, max_bytes: int) -> FileTooLargeError:
    return FileTooLargeError(f"{shown} is larger than {_size(max_bytes)}; it was not read.")


def read_project_text(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES,
                      follow_symlinks: bool = True, errors: str = "replace") -> str:
    """:func:`read_project_file` decoded as UTF-8 (``errors`` as for ``bytes.decode``)."""
    return read_project_file(path, max_bytes=max_bytes,
                             follow_symlinks=follow_symlinks).decode("utf-8", errors)


def _size(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KB"
    return f"{n} bytes"


__all__ = ["DEFAULT_MAX_BYTES", "FileMissingError", "FileTooLargeError", "NotRegularFileError",
           "UnsafeReadError", "read_project_file", "read_project_text"]
