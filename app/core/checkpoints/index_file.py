"""Small files in the shadow repository written directly, atomically.

(The first snapshot's git index itself is built by :func:`pack_writer.index_bytes`.)
"""

from __future__ import annotations

import hashlib
import os
import threading
import zlib
from pathlib import Path

__all__ = ["write_atomically", "write_object"]


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


def write_object(objects: Path, kind: str, body: bytes) -> str:
    """Store a loose object (the format every git reads) unless present; its id."""
    raw = kind.encode() + b" %d\0" % len(body) + body
    oid = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
    target = objects / oid[:2] / oid[2:]
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(target, zlib.compress(raw, 1), mode=0o444)
    return oid
