"""Reading many stored objects in a row through one running ``git cat-file --batch``; and
the engine's error."""

from __future__ import annotations

import subprocess

__all__ = ["BlobReader", "CheckpointError"]


class CheckpointError(RuntimeError):
    """A git command of the checkpoint engine failed (message says which and why)."""


class BlobReader:
    """Reads objects by id from a running ``git cat-file --batch``."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        self._proc = proc

    def read(self, oid: str) -> bytes:
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write(oid.encode() + b"\n")
        stdin.flush()
        header = stdout.readline()
        parts = header.split()
        if len(parts) != 3:
            raise CheckpointError(f"object {oid} is missing from the checkpoint store")
        size = int(parts[2])
        data = stdout.read(size)
        stdout.read(1)  # the newline after each object
        if len(data) != size:
            raise CheckpointError(f"object {oid} could not be read")
        return data
