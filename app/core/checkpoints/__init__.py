"""The checkpoint engine: record a project folder before and after each tool call, show what
changed, undo and redo — without ever touching the project's own ``.git``.

Everything here is synchronous and blocking (git runs as a child process): call it from a
worker thread, never from the UI thread. A :class:`CheckpointStore` is safe to share between
threads; it serializes its work with a lock.

How it works: each project gets a *shadow* bare repository in Tebiki's data folder
(``<data_dir>/checkpoints/<hash of the project path>``) with its own index. A snapshot asks git
which paths differ from that index (``git status``, which uses the index's stat cache and the
untracked cache, so only changed files are hashed), hashes those, and records the tree as a
commit kept by the ref ``refs/tebiki/<id>``. The first snapshot of a larger folder (nothing
to compare with yet) is written directly instead (``pack_writer``): worker threads read and
hash the files into one uncompressed pack, with its trees, and write the shadow's index with
each file's stat data; the next :meth:`CheckpointStore.prune` recompresses that pack once.

Coverage: whatever git would see in the folder — the project's ``.gitignore`` files (nested
ones too) apply, plus the built-in excludes (``.venv/``, ``node_modules/``, ``build/``, …) and
``extra_excludes`` in the shadow's ``info/exclude``; the person's global git excludes do not.
A file once recorded stays recorded whatever the ignore rules say later (git keeps what its
index holds). A run's checkpoints use the ignore rules of the run's start (``snapshot(label,
rules)`` with ``freeze_rules()``; ``frozen_rules``): a call that edits a ``.gitignore``
changes what the next run records, never what this one does. Not covered, and listed in
:attr:`Checkpoint.skipped`: files over ``max_file_bytes``, special files (sockets, fifos),
nested repositories or submodules (listed once, as ``dir/``; nothing inside them is stored,
and restore never writes into them), and names git refuses (``.GIT``, ``git~1``, a ``.git``
in a subfolder). :attr:`Checkpoint.ignored` lists what the ignore rules kept out (a folder
ignored whole once, as ``dir/``);
:attr:`Checkpoint.unrecorded` is both lists, which ``coverage.Coverage`` hands to the agent:
a call that runs unasked finds those paths read-only. A ``.gitignore`` or ``.gitattributes``
that is a FIFO or device (git would block reading it) counts as absent (``rule_files``).
Bytes, executable bits and symlinks (as links) are kept exactly; other permission bits are
not stored (restore keeps those of the file it replaces).

The project repository: each checkpoint also records ``<project>/.git``'s HEAD, branch and tag
refs and index file (read as files, git is never run against the project; ``repo_state``),
and a restore whose target differs there writes them back (``RestorePlan.repository``), so a
``git add``/``commit``/``switch`` is undone like a file change. Nothing else of ``.git`` is
read or written. Undoing calls (``remove_created_unrecorded``) also deletes the ignored files
and folders they created (``RestorePlan.created_unrecorded``).

Undo a call: ``plan_restore(target=before_call, expected=after_call, paths=changed_paths)``
then ``restore(plan)``; redo: ``plan_restore(target=after_call, expected=result.after)``
(``result.after`` is the state the undo left; ``result.before`` the state it started from).
Planning and restoring record checkpoints of their own (labels "before restore plan",
"before restore", "after restore"); they show up in :meth:`CheckpointStore.checkpoints`.

Limits: POSIX only (restore walks folders with ``O_NOFOLLOW``/``O_DIRECTORY``); other
permission bits than the executable bits, owners, timestamps and empty folders are not kept.
"""

from app.core.checkpoints.merge import merge_text
from app.core.checkpoints.model import (
    Checkpoint,
    FileChange,
    MergeResult,
    PlannedAction,
    RestorePlan,
    RestoreResult,
)
from app.core.checkpoints.restore import UnsafePathError
from app.core.checkpoints.shadow_repo import CheckpointError
from app.core.checkpoints.store import CheckpointStore

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "CheckpointStore",
    "FileChange",
    "MergeResult",
    "PlannedAction",
    "RestorePlan",
    "RestoreResult",
    "UnsafePathError",
    "merge_text",
]
