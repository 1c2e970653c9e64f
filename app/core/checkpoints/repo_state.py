"""The project repository's own state in a checkpoint: HEAD, branches, tags and the index.

So that a ``git add``, ``commit``, ``switch -c`` or ``switch`` can be undone, each checkpoint
records ``<project>/.git/HEAD`` (symbolic or detached), every loose ref under ``refs/heads``
and ``refs/tags``, ``packed-refs`` and the ``index`` file, and restore writes them back. They
are read and written as files — git is never run against the project here, so nothing in its
configuration can run — and written the way git writes them (``<name>.lock`` created
exclusively, then renamed), so a git the person runs meanwhile fails cleanly instead of
racing. Objects a commit added stay (unreferenced, git's own gc drops them); reflogs are not
restored.

Only a repository whose ``.git`` is a folder in the project root is recorded (not a worktree's
``.git`` file, a parent folder's repository or a reftable one): :attr:`RepoState` is None
otherwise, and nothing of git is restored.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.checkpoints.index_file import write_object
from app.core.safe_read import read_project_file

__all__ = ["REPOSITORY", "RepoState", "RepoStateRecorder"]

# How a restore names the repository's state in its written / kept / errors lists.
REPOSITORY = ".git (HEAD, branches, tags, index)"

_REF_FOLDERS = ("refs/heads", "refs/tags")
_MAX_FILE = 64 * 1024 * 1024  # an index larger than this is not recorded


@dataclass(frozen=True)
class RepoState:
    """What the checkpoint holds of the project repository (blob ids in the shadow)."""

    head: str  # HEAD's text ("ref: refs/heads/main" or a commit id)
    refs: tuple[tuple[str, str], ...]  # (loose ref path, its text), sorted
    packed_refs: str | None  # blob of packed-refs, None when absent
    index: str | None  # blob of the index, None when absent

    def to_json(self) -> dict[str, Any]:
        return {"head": self.head, "refs": [list(r) for r in self.refs],
                "packed_refs": self.packed_refs, "index": self.index}

    @classmethod
    def from_json(cls, data: Any) -> RepoState | None:
        if not isinstance(data, dict):
            return None
        return cls(str(data["head"]), tuple((str(a), str(b)) for a, b in data["refs"]),
                   data.get("packed_refs"), data.get("index"))


class RepoStateRecorder:
    """Records and restores the repository at ``project_root/.git``, storing file bytes as
    loose blobs in the shadow repository's ``objects`` folder."""

    def __init__(self, project_root: Path, shadow_objects: Path):
        self.git_dir = project_root / ".git"
        self._objects = shadow_objects
        self._known: dict[tuple[str, int, int, int], str] = {}  # (name, stat) -> blob

    def record(self) -> RepoState | None:
        try:
            if not self.git_dir.is_dir() or self.git_dir.is_symlink() or \
                    not (self.git_dir / "refs").is_dir():
                return None
            head = _read(self.git_dir / "HEAD").decode("utf-8", "surrogateescape").strip()
            refs: list[tuple[str, str]] = []
            for folder in _REF_FOLDERS:
                base = self.git_dir / folder
                for parent, _, files in os.walk(base):
                    for name in files:
                        if name.endswith(".lock"):
                            continue
                        path = Path(parent, name)
                        text = _read(path).decode("utf-8", "surrogateescape").strip()
                        refs.append((path.relative_to(self.git_dir).as_posix(), text))
            return RepoState(head, tuple(sorted(refs)), self._stored("packed-refs"),
                             self._stored("index"))
        except (OSError, UnicodeError):
            return None

    def _stored(self, name: str) -> str | None:
        path = self.git_dir / name
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return None
        if st.st_size > _MAX_FILE:
            raise OSError(errno.EFBIG, "too large to record", str(path))
        key = (name, st.st_mtime_ns, st.st_size, st.st_ino)
        known = self._known.get(key)
        if known is not None and (self._objects / known[:2] / known[2:]).exists():
            return known
        oid = write_object(self._objects, "blob", _read(path, _MAX_FILE))
        self._known = {k: v for k, v in self._known.items() if k[0] != name}
        self._known[key] = oid
        return oid

    def restore(self, target: RepoState, read_blob: Callable[[str], bytes]) -> None:
        """Make HEAD, the refs, packed-refs and the index those of ``target``."""
        if not self.git_dir.is_dir() or self.git_dir.is_symlink():
            raise OSError(errno.ENOENT, "the repository is gone", str(self.git_dir))
        wanted = dict(target.refs)
        for parent, _, files in os.walk(self.git_dir / "refs"):
            for name in files:
                path = Path(parent, name)
                rel = path.relative_to(self.git_dir).as_posix()
                if rel.startswith(_REF_FOLDERS) and not name.endswith(".lock") and \
                        rel not in wanted:
                    _locked_write(path, None)
        for rel, text in target.refs:
            path = self.git_dir / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            _locked_write(path, (text + "\n").encode("utf-8", "surrogateescape"))
        _locked_write(self.git_dir / "packed-refs", None if target.packed_refs is None
                      else read_blob(target.packed_refs))
        _locked_write(self.git_dir / "index", None if target.index is None
                      else read_blob(target.index))
        _locked_write(self.git_dir / "HEAD", (target.head + "\n").encode(
            "utf-8", "surrogateescape"))


def _locked_write(path: Path, data: bytes | None) -> None:
    """Write (or, for None, delete) ``path`` under git's lock protocol."""
    lock = path.with_name(path.name + ".lock")
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        if data is None:
            os.close(fd)
            fd = -1
            path.unlink(missing_ok=True)
            lock.unlink()
            return
        with os.fdopen(fd, "wb") as f:
            fd = -1
            f.write(data)
        os.replace(lock, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        lock.unlink(missing_ok=True)
        raise


def _read(path: Path, max_bytes: int = 1 << 20) -> bytes:
    """A repository file's bytes, never waiting on it (a FIFO or device there is refused)."""
    return read_project_file(path, max_bytes=max_bytes, follow_symlinks=False)
