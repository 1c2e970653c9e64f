"""CheckpointStore: snapshots of a project folder, what changed between two, and restoring.

All methods block (git runs as a child process) and are meant to be called from a worker
thread, never from the UI thread. One store may be used from several threads: an internal
lock (and a file lock in the data folder, for other stores or processes on the same project)
serializes everything that touches the shadow repository.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from app.core.checkpoints.frozen_rules import FrozenRules
from app.core.checkpoints.model import (
    Checkpoint,
    FileChange,
    PlannedAction,
    Resolution,
    RestorePlan,
    RestoreResult,
)
from app.core.checkpoints.records import parse_changes, parse_checkpoint
from app.core.checkpoints.repo_state import REPOSITORY, RepoStateRecorder
from app.core.checkpoints.restore import ProjectWriter, action_for, apply_actions
from app.core.checkpoints.rule_files import (
    RuleFileGuard,
)
from app.core.checkpoints.shadow_repo import (
    BUILTIN_EXCLUDES,
    ShadowRepo,
    TreeEntry,
)
from app.core.checkpoints.snapshot import Snapshotter

try:
    import fcntl
except ImportError:  # Windows: the thread lock alone
    fcntl = None  # type: ignore[assignment]

__all__ = ["CheckpointStore"]

_DIFF_PATHS_PER_CALL = 500


class CheckpointStore:
    """Checkpoints of ``project_root`` kept in ``data_dir/checkpoints/<hash>``."""

    def __init__(self, data_dir: Path, project_root: Path, *,
                 max_file_bytes: int = 10 * 1024 * 1024,
                 extra_excludes: Sequence[str] = ()) -> None:
        self.project_root = Path(project_root).resolve()
        self.max_file_bytes = max_file_bytes
        key = hashlib.sha256(os.fsencode(self.project_root)).hexdigest()[:24]
        self._base = Path(data_dir) / "checkpoints"
        self._shadow_dir = self._base / key
        self._repo = ShadowRepo(self._shadow_dir, self.project_root, extra_excludes)
        self._repo_state = RepoStateRecorder(self.project_root, self._shadow_dir / "objects")
        self._snapshots = Snapshotter(self._repo, self._repo_state, max_file_bytes,
                                      RuleFileGuard(self.project_root, self._shadow_dir / "empty",
                                                    (*BUILTIN_EXCLUDES, *extra_excludes)))
        self._writer = ProjectWriter(self.project_root)
        self._thread_lock = threading.RLock()
        self._initialized = False

    @property
    def shadow_dir(self) -> Path:
        return self._shadow_dir

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with self._thread_lock:
            self._base.mkdir(parents=True, exist_ok=True)
            with open(self._base / f"{self._shadow_dir.name}.lock", "a+b") as lock_file:
                if fcntl is not None:
                    fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX)
                try:
                    if not self._initialized or not self._repo.is_initialized():
                        # held by no one now (we hold the lock): left by a crash
                        for stale in ("index.lock", "packed-refs.lock", "HEAD.lock"):
                            (self._shadow_dir / stale).unlink(missing_ok=True)
                        self._repo.initialize()
                        (self._shadow_dir / "project").write_text(
                            os.fsdecode(self.project_root) + "\n", errors="surrogateescape")
                        self._initialized = True
                    yield
                finally:
                    if fcntl is not None:
                        fcntl.flock(lock_file.fileno(), fcntl.LOCK_UN)

    # -- snapshots -----------------------------------------------------------------------------

    def snapshot(self, label: str = "", rules: FrozenRules | None = None) -> Checkpoint:
        """Record the project folder's current state (with a run's ignore ``rules``, fixed
        when it started, when given)."""
        with self._locked():
            return self._snapshots.take(label, rules)

    def freeze_rules(self) -> FrozenRules:
        """The ignore rules now: a run's checkpoints keep using them (see frozen_rules)."""
        with self._locked():
            return self._snapshots.freeze_rules()

    def _snapshot(self, label: str) -> Checkpoint:
        return self._snapshots.take(label)

    def checkpoint(self, checkpoint_id: str) -> Checkpoint:
        """The checkpoint with this id (as recorded)."""
        with self._locked():
            return parse_checkpoint(checkpoint_id, self._repo.commit_message(checkpoint_id))

    def checkpoints(self) -> list[Checkpoint]:
        """Every kept checkpoint, oldest first."""
        with self._locked():
            found = [parse_checkpoint(c, body) for c, body in self._repo.kept_commits()]
        return sorted(found, key=lambda cp: cp.created)

    def read_blob(self, blob_id: str) -> bytes:
        """A stored file's bytes (ids from :class:`PlannedAction`)."""
        with self._locked():
            return self._repo.run("cat-file", "blob", blob_id)

    # -- comparing -----------------------------------------------------------------------------

    def changes(self, before: Checkpoint, after: Checkpoint) -> list[FileChange]:
        """Files that differ from ``before`` to ``after`` (renames detected)."""
        with self._locked():
            raw = self._repo.run("diff-tree", "-r", "-z", "-M", "--raw", before.id, after.id)
            numstat = self._repo.run("diff-tree", "-r", "-z", "-M", "--numstat",
                                     before.id, after.id)
        return parse_changes(raw, numstat)

    def diff_text(self, before: Checkpoint, after: Checkpoint,
                  paths: Sequence[str] | None = None, max_bytes: int = 200_000) -> str:
        """Unified diff from ``before`` to ``after``; binary files as "Binary files differ"."""
        with self._locked():
            return self._diff_text(before.id, after.id, paths, max_bytes)

    def _diff_text(self, before: str, after: str, paths: Sequence[str] | None,
                   max_bytes: int) -> str:
        args = ["diff-tree", "-p", "-r", "--no-renames", "--no-color", "--no-ext-diff",
                "--no-textconv", before, after]
        groups: list[Sequence[str]] = [()] if paths is None else [
            paths[i:i + _DIFF_PATHS_PER_CALL] for i in range(0, len(paths), _DIFF_PATHS_PER_CALL)]
        chunks: list[bytes] = []
        left = max_bytes
        for group in groups:
            data, truncated = self._repo.run_capped(*args, "--", *group, max_bytes=left)
            chunks.append(data)
            left -= len(data)
            if truncated or left <= 0:
                return b"".join(chunks).decode("utf-8", "replace") + "\n… (diff truncated)\n"
        return b"".join(chunks).decode("utf-8", "replace")

    # -- restoring -----------------------------------------------------------------------------

    def plan_restore(self, target: Checkpoint, expected: Checkpoint,
                     paths: Sequence[str] | None = None, *,
                     remove_created_unrecorded: bool = False) -> RestorePlan:
        """What restoring ``target`` would do to ``paths`` (files or folders; all if None).

        ``expected`` is the state the caller believes the folder is in (the checkpoint after
        the agent's call); a path whose current content differs from it is a conflict.
        ``remove_created_unrecorded`` (undoing calls): ignored files and folders that appeared
        from ``target`` to ``expected`` and are still there are deleted too (the calls made
        them; no checkpoint holds their content, so redo cannot bring them back).
        """
        with self._locked():
            current = self._snapshot("before restore plan")
            scope = None if paths is None else [p.strip("/") for p in paths]
            target_tree = self._repo.tree_entries(target.id, scope)
            expected_tree = self._repo.tree_entries(expected.id, scope)
            now = self._repo.tree_entries(current.id, scope)
            actions: list[PlannedAction] = []
            not_restorable: list[str] = []
            # what the target did not record (skipped, or ignored: its content then is not
            # known) is never written nor deleted, even where a later checkpoint recorded it
            uncovered = set(target.unrecorded)
            for path in _scope(paths, target_tree, expected_tree, now):
                target_entry, current_entry = target_tree.get(path), now.get(path)
                kind = action_for(target_entry, current_entry)
                if kind is None:
                    continue
                if path in uncovered or any(f"{d}/" in uncovered for d in _dirs(path)):
                    not_restorable.append(path)
                    continue
                expected_entry = expected_tree.get(path)
                conflict = current_entry != expected_entry or (
                    current_entry is None and self._writer.exists(path))
                actions.append(PlannedAction(
                    path=path, kind=kind,
                    target_mode=target_entry[0] if target_entry else None,
                    target_blob=target_entry[1] if target_entry else None,
                    current_blob=current_entry[1] if current_entry else None,
                    expected_blob=expected_entry[1] if expected_entry else None,
                    conflict=conflict))
            created = self._created_unrecorded(target, expected) \
                if remove_created_unrecorded else ()
            repository = "" if target.repo in (None, current.repo, expected.repo) else \
                "restore" if current.repo == expected.repo else "conflict"
            planned = [a.path for a in actions]
            preview = self._diff_text(current.id, target.id, planned, 200_000) if planned else ""
        return RestorePlan(
            target=target, expected=expected, current=current, actions=tuple(actions),
            conflicts=tuple(a.path for a in actions if a.conflict),
            not_restorable=tuple(not_restorable), preview_diff=preview,
            paths=None if paths is None else tuple(paths), created_unrecorded=created,
            repository=repository)

    def _created_unrecorded(self, target: Checkpoint, expected: Checkpoint) -> tuple[str, ...]:
        before = set(target.unrecorded)
        out: list[str] = []
        for entry in sorted(set(expected.ignored) - before):
            path = entry.rstrip("/")
            if any(d in before or f"{d}/" in before for d in _dirs(entry)) or \
                    not self._writer.exists(path):
                continue  # inside what was already there, or gone
            if entry.endswith("/") and (self._repo.tree_entries(target.id, [path]) or any(
                    b.startswith(entry) for b in before)):
                continue  # the folder held recorded or earlier files: not only the calls'
            out.append(path)
        return tuple(out)

    def restore(self, plan: RestorePlan,
                resolutions: Mapping[str, Resolution] | None = None) -> RestoreResult:
        """Carry out ``plan``. Conflicts keep the person's version unless resolved "take"."""
        with self._locked():
            before = self._snapshot("before restore")
            result = RestoreResult(before=before)
            scope = [a.path for a in plan.actions]
            now = self._repo.tree_entries(before.id, scope)
            target_tree = self._repo.tree_entries(plan.target.id, scope)
            expected_tree = self._repo.tree_entries(plan.expected.id, scope)
            folders = sorted({d for p in scope for d in _dirs(p)})
            in_folders = self._repo.tree_entries(plan.target.id, folders) if folders else {}
            target_dirs = {d for p in in_folders for d in _dirs(p)}
            with self._repo.blob_reader() as blobs:
                apply_actions(self._writer, plan.actions, now, target_tree, expected_tree,
                              target_dirs, resolutions or {}, blobs.read, result)
                if plan.repository:
                    self._restore_repository(plan, before, resolutions or {}, blobs.read,
                                             result)
            for path in plan.created_unrecorded:
                try:
                    self._writer.delete_tree(path)
                    result.deleted.append(path)
                except OSError as exc:
                    result.errors[path] = exc.strerror or str(exc)
            result.after = self._snapshot("after restore")
        return result

    def _restore_repository(self, plan: RestorePlan, now: Checkpoint,
                            resolutions: Mapping[str, Resolution],
                            read_blob: Callable[[str], bytes], result: RestoreResult) -> None:
        """HEAD, refs and index back to the target's, unless the person changed them since
        the plan's ``expected`` state (a conflict: kept unless resolved "take")."""
        if plan.target.repo in (None, now.repo):
            return
        if now.repo != plan.expected.repo and resolutions.get(REPOSITORY) != "take":
            result.kept.append(REPOSITORY)
            return
        try:
            self._repo_state.restore(plan.target.repo, read_blob)
            result.written.append(REPOSITORY)
        except OSError as exc:
            result.errors[REPOSITORY] = exc.strerror or str(exc)

    # -- housekeeping --------------------------------------------------------------------------

    def usage_bytes(self) -> int:
        """Disk space the shadow repository takes."""
        total = 0
        for folder, _, files in os.walk(self._shadow_dir):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(folder, name)).st_size
        return total

    def prune(self, *, max_age_days: float | None, max_bytes: int | None) -> int:
        """Drop checkpoints older than ``max_age_days`` and, oldest first, more while the store
        is over ``max_bytes``; the newest checkpoint always stays. Returns how many went."""
        with self._locked():
            kept = sorted(((parse_checkpoint(c, body).created, c) for c, body in
                           self._repo.kept_commits()))
            removable = kept[:-1]
            drop: list[str] = []
            if max_age_days is not None:
                cutoff = time.time() - max_age_days * 86400
                drop = [c for created, c in removable if created < cutoff]
            removable = removable[len(drop):]
            self._repo.drop_refs(drop)
            self._repo.collect_garbage()
            removed = len(drop)
            while max_bytes is not None and removable and self.usage_bytes() > max_bytes:
                batch = [c for _, c in removable[:max(1, len(removable) // 4)]]
                removable = removable[len(batch):]
                self._repo.drop_refs(batch)
                self._repo.collect_garbage()
                removed += len(batch)
            return removed

    def delete_all(self) -> None:
        """Forget every checkpoint of this project."""
        with self._locked():
            shutil.rmtree(self._shadow_dir, ignore_errors=True)
            self._initialized = False


def _dirs(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]


def _scope(paths: Sequence[str] | None, *trees: Mapping[str, TreeEntry]) -> list[str]:
    every = set().union(*trees)
    if paths is None:
        return sorted(every)
    wanted = {p.strip("/") for p in paths}
    return sorted(p for p in every if p in wanted or any(d in wanted for d in _dirs(p)))
