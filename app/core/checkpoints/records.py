"""How checkpoints are written down in the shadow repository and read back: the metadata in
each checkpoint commit's message, and ``git diff-tree`` output as :class:`FileChange` lists."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from app.core.checkpoints.model import ChangeKind, Checkpoint, FileChange
from app.core.checkpoints.repo_state import RepoState
from app.core.checkpoints.shadow_repo import CheckpointError

__all__ = ["message", "parse_changes", "parse_checkpoint"]

_META_PREFIX = "tebiki-checkpoint "


def parse_changes(raw: bytes, numstat: bytes) -> list[FileChange]:
    """The changes in ``diff-tree -z -M --raw`` output (``numstat`` says which are binary)."""
    binary = _binary_paths(numstat)
    fields = raw.split(b"\0")
    out: list[FileChange] = []
    i = 0
    while i < len(fields) - 1:
        meta = fields[i].decode().lstrip(":").split(" ")
        old_mode, new_mode, old_oid, new_oid, status = meta
        letter = status[0]
        old_path: str | None = None
        path = os.fsdecode(fields[i + 1])
        i += 2
        if letter in "RC":
            old_path, path = path, os.fsdecode(fields[i])
            i += 1
        kind: ChangeKind
        if letter == "A" or letter == "C":
            kind = "added"
        elif letter == "D":
            kind = "deleted"
        elif letter == "R":
            kind = "renamed"
        elif letter == "T":
            kind = "type"
        elif old_oid == new_oid and old_mode != new_mode:
            kind = "mode"
        else:
            kind = "modified"
        out.append(FileChange(path=path, kind=kind, old_path=old_path,
                              binary=path in binary))
    return out


def message(label: str, created: float, skipped: Sequence[str],
            ignored: Sequence[str] = (), repo: RepoState | None = None) -> str:
    subject = " ".join(label.split()) or "checkpoint"
    meta = json.dumps({"created": created, "label": label, "skipped": list(skipped),
                       "ignored": list(ignored),
                       "repo": repo.to_json() if repo is not None else None})
    return f"{subject}\n\n{_META_PREFIX}{meta}\n"


def parse_checkpoint(commit: str, body: str) -> Checkpoint:
    for line in body.splitlines():
        if line.startswith(_META_PREFIX):
            meta = json.loads(line[len(_META_PREFIX):])
            return Checkpoint(id=commit, created=float(meta["created"]), label=meta["label"],
                              skipped=tuple(meta["skipped"]),
                              ignored=tuple(meta.get("ignored", ())),
                              repo=RepoState.from_json(meta.get("repo")))
    raise CheckpointError(f"{commit} is not a checkpoint")


def _binary_paths(numstat: bytes) -> set[str]:
    fields = numstat.split(b"\0")
    binary: set[str] = set()
    i = 0
    while i < len(fields) - 1:
        added, _deleted, path = fields[i].split(b"\t", 2)
        i += 1
        if not path:  # a rename: old and new path follow
            path = fields[i + 1]
            i += 2
        if added == b"-":
            binary.add(os.fsdecode(path))
    return binary
