"""One bounded walk of a folder, finding what git and the person's tools run from it: nested
``.git`` folders and ``.git`` files (gitdir pointers), bare repositories, and persistence paths.

The walk is cached per folder and reused while the modification time of every folder it
listed is unchanged (an entry added, removed or renamed anywhere changes its folder's mtime),
so a call pays one ``stat`` per folder, not a listing. Nothing is skipped: symlinks are not
followed (what they point to inside the folder is walked at its real place; outside, the
sandbox keeps it read-only anyway), ``.git`` folders and bare repositories are recorded whole
instead of being entered, and a walk that reaches :data:`MAX_ENTRIES` says so in
``incomplete`` rather than pretending it saw everything.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from app.core.stamps import may_change_unseen
from app.core.tools.persistence import persistence_folder, persistence_reason

__all__ = ["MAX_ENTRIES", "TreeScan", "persistence_paths", "scan_tree"]

MAX_ENTRIES = 200_000  # entries one walk lists before it gives up (and says so)
_CACHE_SIZE = 16
_BARE_MARKERS = frozenset({"HEAD", "refs"})


@dataclass(frozen=True)
class TreeScan:
    root: Path
    git_dirs: tuple[Path, ...]  # ``.git`` folders (the root's own too) and bare repositories
    git_files: tuple[Path, ...]  # ``.git`` files and symlinks: gitdir pointers
    persistence: tuple[Path, ...]  # top-most persistence paths (a folder covers its contents)
    incomplete: str  # non-empty: why the walk stopped early
    stamps: tuple[tuple[str, int], ...]  # every folder listed, with its mtime_ns

    def current(self) -> bool:
        """Whether no folder the walk listed has changed since."""
        for path, mtime in self.stamps:
            try:
                if os.stat(path).st_mtime_ns != mtime:
                    return False
            except OSError:
                return False
        return True


_cache: OrderedDict[str, TreeScan] = OrderedDict()
_lock = threading.Lock()


def scan_tree(root: Path) -> TreeScan:
    """The walk of ``root`` (resolved), from the cache while it is current."""
    key = str(root)
    with _lock:
        cached = _cache.get(key)
    if cached is not None and cached.current():
        with _lock:
            _cache.move_to_end(key)
        return cached
    scan, cacheable = _walk(root)
    with _lock:
        if cacheable:
            _cache[key] = scan
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
        else:
            _cache.pop(key, None)
    return scan


def persistence_paths(folder: Path) -> list[Path]:
    """The persistence paths that exist in ``folder`` (see ``persistence``), for mounting them
    read-only for a program that runs unasked: ``.git`` folders and files, hook folders,
    editor tasks, direnv files, ``.pth`` files…"""
    scan = scan_tree(folder.resolve())
    return sorted({*scan.persistence, *scan.git_dirs, *scan.git_files})


def _is_bare(names: set[str]) -> bool:
    return names >= _BARE_MARKERS and ("objects" in names or "commondir" in names)


def _walk(root: Path) -> tuple[TreeScan, bool]:
    began = time.time_ns()
    git_dirs: list[Path] = []
    git_files: list[Path] = []
    persistence: list[Path] = []
    stamps: list[tuple[str, int]] = []
    incomplete = ""
    seen = 0
    # (folder, its path relative to root, whether a persistence folder already covers it)
    pending: list[tuple[str, str, bool]] = [(str(root), "", False)]
    while pending:
        folder, relative, covered = pending.pop()
        try:
            mtime = os.stat(folder).st_mtime_ns
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as exc:
            if folder == str(root):
                stamps.append((folder, -1))  # recheck: it may appear later
                break
            incomplete = f"{folder} cannot be listed ({exc.strerror or exc})"
            continue
        stamps.append((folder, mtime))
        seen += len(entries)
        if seen > MAX_ENTRIES:
            incomplete = (f"{root} holds more than {MAX_ENTRIES} files and folders; "
                          "nested git repositories could not all be checked")
            break
        names = {e.name for e in entries}
        if relative and _is_bare(names):
            git_dirs.append(Path(folder))  # a bare repository: recorded whole, not entered
            continue
        for entry in entries:
            name = entry.name
            path = entry.path
            child = f"{relative}/{name}" if relative else name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if name == ".git":
                (git_dirs if is_dir else git_files).append(Path(path))
                continue
            hit = covered
            if not covered and (persistence_folder(name) if is_dir
                                else persistence_reason(child)) is not None:
                persistence.append(Path(path))
                hit = True
            if is_dir:
                pending.append((path, child, hit))
    racy = any(may_change_unseen(m, began) for _, m in stamps)
    scan = TreeScan(root, tuple(git_dirs), tuple(git_files), tuple(persistence), incomplete,
                    tuple(stamps))
    # An incomplete walk is kept too: walking the same huge tree again on every call would
    # find no more.
    return scan, not racy
