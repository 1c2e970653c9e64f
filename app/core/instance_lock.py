"""One app instance per data folder: two windows on one database would silently diverge (each
keeps its own settings, profiles and conversation state in memory and overwrites the other's).

``InstanceLock.acquire`` takes an exclusive ``flock`` on ``<data dir>/tebiki.lock``; the
operating system drops it when the process ends, however it ends, so a crash leaves no stale
lock. A second start finds it held and, through ``instance_channel``'s name, asks the first
window to come to the front (app.ui.single_instance) or says why it cannot start.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

LOCK_FILE = "tebiki.lock"


class InstanceRunningError(Exception):
    """Another instance holds the data folder; ``str()`` says so for a person."""

    def __init__(self, data_dir: Path, pid: int | None) -> None:
        self.data_dir = data_dir
        self.pid = pid
        who = f" (process {pid})" if pid else ""
        super().__init__(f"Tebiki is already running with the data folder {data_dir}{who}. "
                         "Switch to its window, or close it before starting another one.")


@dataclass
class InstanceLock:
    data_dir: Path
    _fd: int

    @classmethod
    def acquire(cls, data_dir: Path) -> InstanceLock:
        """The lock on ``data_dir``, or InstanceRunningError when another instance holds it."""
        import fcntl

        path = data_dir / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(fd)
            os.close(fd)
            raise InstanceRunningError(data_dir, pid) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(data_dir, fd)

    def release(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = -1


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def instance_channel(data_dir: Path) -> str:
    """The local-socket name the first instance listens on, one per data folder (and user)."""
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    return f"tebiki-{os.getuid() if hasattr(os, 'getuid') else 0}-{digest}"
