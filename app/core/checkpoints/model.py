"""The values the checkpoint engine hands out: checkpoints, changes, restore plans and results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from app.core.checkpoints.repo_state import RepoState

__all__ = [
    "ActionKind",
    "ChangeKind",
    "Checkpoint",
    "FileChange",
    "MergeResult",
    "PlannedAction",
    "Resolution",
    "RestorePlan",
    "RestoreResult",
]

ChangeKind = Literal["added", "modified", "deleted", "renamed", "mode", "type"]
ActionKind = Literal["write", "delete", "symlink", "chmod"]
Resolution = Literal["keep", "take"]


@dataclass(frozen=True)
class Checkpoint:
    """The project folder's state at one moment.

    ``skipped`` lists what the checkpoint does not cover, as relative posix paths: files over
    the size cap, files that are neither regular files nor symlinks, and nested repositories
    (written with a trailing ``/``; nothing inside them is stored). ``ignored`` lists what the
    ignore rules keep out (the project's and the built-in ones).
    """

    id: str  # commit id in the shadow repository
    created: float
    label: str
    skipped: tuple[str, ...] = ()
    # what the ignore rules kept out: files, and folders ignored whole (with a trailing "/")
    ignored: tuple[str, ...] = ()
    # the project repository's HEAD, refs and index (None: no repository recorded)
    repo: RepoState | None = None

    @property
    def unrecorded(self) -> tuple[str, ...]:
        """Every existing path this checkpoint does not record (ignored or skipped): what a
        call may not change unasked, since undo could not bring it back."""
        return tuple(sorted({*self.ignored, *self.skipped}))


@dataclass(frozen=True)
class FileChange:
    path: str
    kind: ChangeKind
    old_path: str | None = None  # for "renamed"
    binary: bool = False


@dataclass(frozen=True)
class PlannedAction:
    """What restoring does to one path.

    ``target_mode``/``target_blob`` describe the checkpoint's version (``None`` when the path
    did not exist there); ``current_blob``/``expected_blob`` let the UI show or merge a
    conflict (read them with :meth:`CheckpointStore.read_blob`).
    """

    path: str
    kind: ActionKind
    target_mode: int | None
    target_blob: str | None
    current_blob: str | None
    expected_blob: str | None
    conflict: bool  # the file now differs from `expected`: the person changed it


@dataclass(frozen=True)
class RestorePlan:
    target: Checkpoint
    expected: Checkpoint
    current: Checkpoint  # the folder's state when the plan was made
    actions: tuple[PlannedAction, ...]
    conflicts: tuple[str, ...]
    not_restorable: tuple[str, ...]  # not covered by `target`: left as they are
    preview_diff: str  # unified diff from the current state to `target` for `actions`
    paths: tuple[str, ...] | None = None  # the scope asked for
    # ignored files and folders made after `target` (by the calls undone): deleted by restore
    created_unrecorded: tuple[str, ...] = ()
    # the project repository's HEAD, refs and index go back to `target`'s (a git_ops call
    # changed them); "conflict" when the person changed them since `expected`
    repository: str = ""  # "", "restore" or "conflict"


@dataclass
class RestoreResult:
    before: Checkpoint  # the state just before restoring: the `target` of undoing this
    after: Checkpoint | None = None  # the state it left: the `expected` of a redo
    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # conflicts left as the person had them
    errors: dict[str, str] = field(default_factory=dict)  # path -> why it was not restored

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class MergeResult:
    text: str
    conflicts: int  # number of conflict hunks (marked in `text`)
