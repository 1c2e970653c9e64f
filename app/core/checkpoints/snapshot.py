"""Taking one snapshot: what changed since the shadow index, into it, and a checkpoint commit
with what the snapshot does not record (skipped, ignored) and the project repository's state.
"""

from __future__ import annotations

import os
import stat
import time

from app.core.checkpoints.frozen_rules import FrozenRules, freeze, frozen_status
from app.core.checkpoints.model import Checkpoint
from app.core.checkpoints.records import message
from app.core.checkpoints.repo_state import RepoStateRecorder
from app.core.checkpoints.rule_files import (
    RULE_FILE_NAMES,
    RuleFileGuard,
    UnsafeRuleFile,
    refused_name,
)
from app.core.checkpoints.shadow_repo import BUILTIN_EXCLUDES, CheckpointError, ShadowRepo, Status

__all__ = ["Snapshotter"]

_PARALLEL_MIN_PATHS = 500  # a first snapshot this large is written as one pack directly
_MAX_HASHING_WORKERS = 4


class Snapshotter:
    """Snapshots of ``repo``'s work tree; keeps what it learnt of the tree between them (the
    rule-file scan's folder times, the last ignored listing)."""

    def __init__(self, repo: ShadowRepo, repo_state: RepoStateRecorder, max_file_bytes: int,
                 rule_files: RuleFileGuard) -> None:
        self._repo = repo
        self._project_root = repo.work_tree
        self._repo_state = repo_state
        self.max_file_bytes = max_file_bytes
        self._rule_files = rule_files
        self._ignored: list[bytes] | None = None  # the last ignored listing

    def freeze_rules(self) -> FrozenRules:
        """The ignore rules as they are now, for a run's checkpoints (the caller holds the
        store's lock)."""
        if self._ignored is None:  # which folders git skips is known after one status
            self._hide_unsafe_rule_files()
            status = self._status(None)
            self._rule_files.set_ignored(
                [*status.ignored, *(p for p, _ in status.changed if p.endswith(b"/"))])
        self._rule_files.scan()
        return freeze(self._project_root, self._rule_files.ignore_files())

    def _hide_unsafe_rule_files(self) -> list[bytes]:
        """Scan for rule files git would block on and hide them from it; their paths."""
        try:
            unsafe = self._rule_files.scan()
            self._repo.wrapper = self._rule_files.wrapper(unsafe)
        except UnsafeRuleFile as exc:
            raise CheckpointError(str(exc)) from exc
        return unsafe

    def take(self, label: str, rules: FrozenRules | None = None) -> Checkpoint:
        """Record the project folder's current state (the caller holds the store's lock),
        with ``rules`` as the ignore rules when given (a run's, fixed at its start)."""
        if not self._project_root.is_dir():
            raise CheckpointError(f"project folder {self._project_root} does not exist")
        to_update: list[bytes] = []
        to_unindex: list[bytes] = []
        skipped: list[str] = []
        root = os.fsencode(self._project_root)
        folder_is_link: dict[bytes, bool] = {}
        # rule files git would block on are hidden from it: they count as absent
        unsafe = self._hide_unsafe_rule_files()
        skipped += [os.fsdecode(p) for p in unsafe]  # special files, never listed by git
        status = self._status(rules)
        nested = [p for p, _ in status.changed if p.endswith(b"/")]
        self._rule_files.set_ignored([*status.ignored, *nested])
        refused = [p for p in self._rule_files.refused()
                   if not any(p.startswith(n) for n in nested)]
        for path, tracked in status.changed:
            if path.endswith(b"/"):  # a repository of its own: not covered
                skipped.append(os.fsdecode(path))
                continue
            if any(refused_name(c) for c in path.split(b"/")):
                refused.append(path)  # git would say "Ignoring path"
                continue
            if tracked and _beyond_symlink(root, path, folder_is_link):
                to_unindex.append(path)  # its folder became a symlink: the file is gone here
                continue
            try:
                st = os.lstat(os.path.join(root, path))
            except FileNotFoundError:
                to_update.append(path)  # gone: update-index --remove drops it
                continue
            except OSError:
                st = None
            covered = st is not None and (
                (stat.S_ISLNK(st.st_mode) and not path.endswith(b".gitmodules"))
                or (stat.S_ISREG(st.st_mode) and st.st_size <= self.max_file_bytes))
            if covered:
                to_update.append(path)
                continue
            if tracked:
                to_unindex.append(path)
            if st is None or not stat.S_ISDIR(st.st_mode):  # a folder now: its files follow
                skipped.append(os.fsdecode(path))
        self._repo.remove_from_index(to_unindex)
        workers = max(1, min(os.cpu_count() or 1, _MAX_HASHING_WORKERS))
        if len(to_update) >= _PARALLEL_MIN_PATHS and self._repo.index_is_empty():
            refused += self._repo.add_to_empty_index(to_update, workers,
                                                     max_file_bytes=self.max_file_bytes)
        else:
            refused += self._repo.update_index(to_update)
        skipped += sorted({os.fsdecode(p) for p in refused} - set(skipped))
        tree = self._repo.write_tree()
        created = time.time()
        skipped.sort()
        ignored = sorted(os.fsdecode(p) for p in status.ignored)
        repo = self._repo_state.record()
        keep = [(n, oid) for n, oid in (("index", repo.index), ("packed-refs", repo.packed_refs))
                if oid is not None] if repo is not None else []
        commit = self._repo.commit_tree(
            tree, message(label, created, skipped, ignored, repo), created, keep)
        self._repo.keep_commit(commit)
        return Checkpoint(id=commit, created=created, label=label, skipped=tuple(skipped),
                          ignored=tuple(ignored), repo=repo)

    def _status(self, rules: FrozenRules | None) -> Status:
        """``git status`` with the ignored entries. Listing those costs git its untracked
        cache, so they are listed again only when a folder git walks changed (an entry
        appears or goes in its folder) or a rule file did; else the last listing stands.
        With ``rules`` that are no longer the project's own, git is asked with them."""
        if rules is not None and \
                not rules.same_as_now(self._project_root, self._rule_files.ignore_files()):
            self._ignored = None  # the next status with the project's rules lists them anew
            return frozen_status(self._repo, rules,
                                 (*BUILTIN_EXCLUDES, *self._repo.extra_excludes))
        if self._rule_files.changed or self._ignored is None:
            status = self._repo.status(ignored=True)
        else:
            status = self._repo.status(ignored=False)
            if any(p.rpartition(b"/")[2] in RULE_FILE_NAMES for p, _ in status.changed):
                status = self._repo.status(ignored=True)  # a rule file edited in place
            else:
                status.ignored = self._ignored
        self._ignored = status.ignored
        return status


def _beyond_symlink(root: bytes, path: bytes, cache: dict[bytes, bool]) -> bool:
    """Whether a folder on the way to ``path`` is a symlink (git never looks past one)."""
    parts = path.split(b"/")[:-1]
    for n in range(1, len(parts) + 1):
        folder = b"/".join(parts[:n])
        if folder not in cache:
            try:
                cache[folder] = stat.S_ISLNK(os.lstat(os.path.join(root, folder)).st_mode)
            except OSError:
                cache[folder] = False
        if cache[folder]:
            return True
    return False
