"""Reading and writing git index files and small files in the shadow repository directly.

Only what the parallel first snapshot needs: the entries of a version-2 index (format in
git's Documentation/gitformat-index.txt: a 12-byte header, then per entry 62 bytes of stat
data, object id and flags, the path, and 1-8 NULs padding the entry to a multiple of 8) and
a new index made of them.
"""

from __future__ import annotations

import hashlib
import os
import struct
import threading
from collections.abc import Sequence
from pathlib import Path

__all__ = ["IndexFormatError", "concatenate_indexes", "index_entries", "write_atomically"]


class IndexFormatError(RuntimeError):
    """An index file is not in the version-2 format this module reads."""


def index_entries(data: bytes) -> list[bytes]:
    """The raw entries of a version-2 index file (see git's index-format documentation)."""
    signature, version, count = struct.unpack(">4sII", data[:12])
    if signature != b"DIRC" or version != 2:
        raise IndexFormatError(f"unexpected index format {signature!r} {version}")
    entries = []
    offset = 12
    for _ in range(count):
        flags = struct.unpack(">H", data[offset + 60:offset + 62])[0]
        name_end = offset + 62 + (flags & 0xFFF)
        if flags & 0xFFF == 0xFFF:  # a long name: its length is not in the flags
            name_end = data.index(b"\0", offset + 62)
        length = (name_end - offset + 8) & ~7  # 1 to 8 NULs pad each entry
        entries.append(data[offset:offset + length])
        offset += length
    return entries


def concatenate_indexes(parts: Sequence[Path], target: Path) -> None:
    """Write ``target`` as a version-2 index holding the entries of ``parts`` in order (the
    caller makes sure they are disjoint and sorted); extensions are left out, git rebuilds
    what it needs."""
    entries: list[bytes] = []
    for part in parts:
        if part.exists():
            entries += index_entries(part.read_bytes())
    body = b"DIRC" + struct.pack(">II", 2, len(entries)) + b"".join(entries)
    write_atomically(target, body + hashlib.sha1(body, usedforsecurity=False).digest())
    # git trusts an entry's stat data only if the file is older than the index: keep the
    # oldest part's time, so an entry that was racy in its part stays racy here
    oldest = min(p.stat().st_mtime_ns for p in parts if p.exists())
    os.utime(target, ns=(oldest, oldest))


def write_atomically(path: Path, data: bytes, *, mode: int = 0o644,
                      lock_suffix: bool = False) -> None:
    tmp = path.with_name(path.name + ".lock") if lock_suffix else \
        path.with_name(f"tmp_obj_{os.getpid()}_{threading.get_ident()}")
    if lock_suffix:  # the caller holds the store's lock: a lock file left now is stale
        tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
