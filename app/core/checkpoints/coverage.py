"""What a checkpoint does not record, as the permission facts and the call runner need it.

A call that runs unasked is "reversible" only if everything it can change is recorded; the
paths a checkpoint leaves out (ignored files and folders, files over the size cap, special
files, nested repositories) are made read-only to such a call instead (``ToolContext.protected``).
:class:`Coverage` is that list, taken from the newest checkpoint; the call runner keeps it in
the conversation's tool session (``SESSION_KEY``), where the facts read it without running git.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.checkpoints.model import Checkpoint

__all__ = ["MAX_PROTECTED", "NEEDS_UNRECORDED_KEY", "RECORDS_GIT_STATE", "SESSION_KEY",
           "Coverage", "needs_unrecorded", "remember_needs_unrecorded"]

SESSION_KEY = "checkpoints.coverage"
# A built-in tool's spec annotation: its only effects on the project repository are on what
# checkpoints record of it (HEAD, refs, index), so its writes are undoable (git_ops).
RECORDS_GIT_STATE = "tebiki.checkpoint_records_git_state"
# call keys (tool name and input) that failed for want of writing an unrecorded path
NEEDS_UNRECORDED_KEY = "checkpoints.needs_unrecorded_writes"

# Each protected path is a mount in the sandbox: beyond this many, a call that may change
# files is not run unasked at all (the facts say "not reversible").
MAX_PROTECTED = 4000


@dataclass(frozen=True)
class Coverage:
    """The existing paths ``root``'s newest checkpoint does not record (relative posix paths;
    folders with a trailing ``/``)."""

    root: Path
    unrecorded: tuple[str, ...]
    repository: bool = False  # the project repository's HEAD, refs and index are recorded

    @classmethod
    def of(cls, root: Path, checkpoint: Checkpoint) -> Coverage:
        return cls(root, checkpoint.unrecorded, checkpoint.repo is not None)

    def entry_for(self, path: str | Path) -> str | None:
        """The unrecorded entry ``path`` (absolute) is, or lies in; None when recorded."""
        try:
            rel = Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return None
        for entry in self.unrecorded:
            folder = entry.rstrip("/")
            if rel == folder or rel.startswith(folder + "/"):
                return entry
        return None

    @property
    def protectable(self) -> bool:
        return len(self.unrecorded) <= MAX_PROTECTED

    def protected_paths(self) -> tuple[Path, ...]:
        """Absolute paths to keep read-only."""
        return tuple(self.root / e.rstrip("/") for e in self.unrecorded)


def call_key(tool_name: str, tool_input: Mapping[str, Any]) -> str:
    return tool_name + "\0" + json.dumps(tool_input, sort_keys=True, default=str)


def remember_needs_unrecorded(session: MutableMapping[str, Any], tool_name: str,
                              tool_input: Mapping[str, Any]) -> None:
    """This call failed because a path it needed was read-only: the next identical call must
    not run unasked (the facts then say "not reversible")."""
    keys = session.setdefault(NEEDS_UNRECORDED_KEY, set())
    keys.add(call_key(tool_name, tool_input))


def needs_unrecorded(session: Mapping[str, Any], tool_name: str,
                     tool_input: Mapping[str, Any]) -> bool:
    keys = session.get(NEEDS_UNRECORDED_KEY)
    return isinstance(keys, set) and call_key(tool_name, tool_input) in keys
