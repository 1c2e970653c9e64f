"""What inside a visible folder must not be seen or written: one incremental, cached walk.

Every program start asks for the folders it will see (the project, the write folders, the
toolchains): the files and folders with a secret's name (``.env``, ``*.pem``, ``*.tfstate``:
``SensitivePaths.name_is_secret``), the special files (a unix socket is a door to another
program; a FIFO named ``.gitignore`` would hang every program that reads it)
and the regular files with more than one hard link (in a write folder, writing one would
change its twin outside). Walking a 10,000-file project at every start would cost more than the
sandbox itself, so the scanner remembers each directory's listing with its modification time
and lists again only the directories that changed; the unchanged ones cost one ``stat``.

What a directory's mtime does not show: a file's link count changing later (a hard link made
to it from outside) and a file's type changing in place. Neither can happen from inside the
sandbox (link(2) across bind mounts fails with EXDEV), and the folders of a stale listing are
re-listed as soon as anything is added or removed in them.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

__all__ = ["INSTALLED_PACKAGES", "TreeFindings", "TreeScanner", "same_files"]

# Folders of installed packages: their files are not the person's secrets by name (certifi's
# cacert.pem, test keys of a library), and hiding them breaks the program, so names inside are
# not matched; hard links and special files still are (uv hard-links a .venv to its cache).
INSTALLED_PACKAGES = frozenset({"site-packages", "dist-packages", "node_modules"})


@dataclass(frozen=True)
class TreeFindings:
    """What one walk found under a folder (absolute paths)."""

    secret_files: tuple[Path, ...] = ()
    secret_folders: tuple[Path, ...] = ()
    special_files: tuple[Path, ...] = ()  # sockets, FIFOs, device nodes
    hard_links: tuple[Path, ...] = ()
    folders: int = 0  # directories walked (for the bench and the Settings page)
    # Hard links of a secret file of the tree: the secret under another name.
    secret_twins: tuple[Path, ...] = ()

    def person_links(self) -> tuple[Path, ...]:
        """The hard-linked files that could be the person's data under another name: not git's
        objects (a local clone links them), not installed packages (uv links a .venv)."""
        skipped = INSTALLED_PACKAGES | {".git"}
        return tuple(p for p in self.hard_links if skipped.isdisjoint(p.parts))


@dataclass(frozen=True)
class _Listing:
    mtime_ns: int
    subdirs: tuple[str, ...]
    secret_files: tuple[str, ...]
    secret_folders: tuple[str, ...]
    special_files: tuple[str, ...]
    hard_links: tuple[str, ...]


@dataclass(frozen=True)
class _Checked:
    at: float
    findings: TreeFindings


class TreeScanner:
    """The cached walk; safe to share between threads (one walk at a time)."""

    def __init__(self, is_secret: Callable[[str], bool]) -> None:
        self._is_secret = is_secret
        self._lock = threading.Lock()
        self._listings: dict[str, _Listing] = {}
        self._checked: dict[str, _Checked] = {}

    def scan(self, root: Path, *, max_age_s: float = 0.0) -> TreeFindings:
        """The findings under ``root`` (resolved, an existing folder). ``max_age_s``: a walk
        younger than this is answered from memory without a ``stat`` (for folders nothing in
        the sandbox can write and that rarely change: toolchains, Tebiki's own runtime)."""
        key = os.fspath(root)
        with self._lock:
            now = time.monotonic()
            checked = self._checked.get(key)
            if checked is not None and max_age_s > 0 and now - checked.at < max_age_s:
                return checked.findings
            findings = self._walk(key)
            self._checked[key] = _Checked(now, findings)
            return findings

    def forget(self) -> None:
        with self._lock:
            self._listings.clear()
            self._checked.clear()

    def _walk(self, root: str) -> TreeFindings:
        secret_files: list[Path] = []
        secret_folders: list[Path] = []
        special_files: list[Path] = []
        hard_links: list[Path] = []
        walked = 0
        pending = [root]
        while pending:
            folder = pending.pop()
            listing = self._listing(folder)
            if listing is None:
                continue
            walked += 1
            secret_files += [Path(folder, n) for n in listing.secret_files]
            secret_folders += [Path(folder, n) for n in listing.secret_folders]
            special_files += [Path(folder, n) for n in listing.special_files]
            hard_links += [Path(folder, n) for n in listing.hard_links]
            pending += [os.path.join(folder, n) for n in listing.subdirs]
        found = TreeFindings(tuple(secret_files), tuple(secret_folders), tuple(special_files),
                             tuple(hard_links), walked)
        links = found.person_links()
        if not links:
            return found
        return replace(found, secret_twins=same_files(
            links, (*found.secret_files, *found.secret_folders)))

    def _listing(self, folder: str) -> _Listing | None:
        try:
            mtime = os.lstat(folder).st_mtime_ns
        except OSError:
            self._listings.pop(folder, None)
            return None
        cached = self._listings.get(folder)
        if cached is not None and cached.mtime_ns == mtime:
            return cached
        listing = self._list(folder, mtime)
        self._listings[folder] = listing
        return listing

    def _list(self, folder: str, mtime: int) -> _Listing:
        subdirs: list[str] = []
        secret_files: list[str] = []
        secret_folders: list[str] = []
        special_files: list[str] = []
        hard_links: list[str] = []
        by_name = not INSTALLED_PACKAGES.intersection(folder.split(os.sep))
        try:
            entries = list(os.scandir(folder))
        except OSError:
            entries = []
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if by_name and self._is_secret(name) and not entry.is_symlink():
                    (secret_folders if is_dir else secret_files).append(name)
                    continue
                if is_dir:
                    subdirs.append(name)
                elif entry.is_file(follow_symlinks=False):
                    if entry.stat(follow_symlinks=False).st_nlink > 1:
                        hard_links.append(name)
                elif not entry.is_symlink() and _is_special(
                        entry.stat(follow_symlinks=False).st_mode):
                    special_files.append(name)
            except OSError:
                continue
        return _Listing(mtime, tuple(subdirs), tuple(secret_files), tuple(secret_folders),
                        tuple(special_files), tuple(hard_links))


# How many files of the secrets' folders are compared with hard links, at most.
MAX_TWIN_CANDIDATES = 2000


def same_files(links: tuple[Path, ...], secrets: tuple[Path, ...]) -> tuple[Path, ...]:
    """The ``links`` that are the same file (device and inode) as one of ``secrets`` (files, or
    folders whose files count): a secret hard-linked under a harmless name."""
    wanted: set[tuple[int, int]] = set()
    for path in _files_of(secrets):
        try:
            info = os.stat(path, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            wanted.add((info.st_dev, info.st_ino))
    out: list[Path] = []
    for link in links if wanted else ():
        try:
            info = os.stat(link, follow_symlinks=False)
        except OSError:
            continue
        if (info.st_dev, info.st_ino) in wanted:
            out.append(link)
    return tuple(out)


def _files_of(paths: tuple[Path, ...]) -> list[str]:
    files: list[str] = []
    for path in paths:
        if not os.path.isdir(path) or os.path.islink(path):
            files.append(os.fspath(path))
            continue
        for folder, _dirs, names in os.walk(path):
            files += [os.path.join(folder, n) for n in names]
            if len(files) >= MAX_TWIN_CANDIDATES:
                return files[:MAX_TWIN_CANDIDATES]
    return files


def _is_special(mode: int) -> bool:
    """Not a file, folder or link: a socket, FIFO or device node, shown as ``/dev/null``."""
    return stat.S_ISSOCK(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or \
        stat.S_ISBLK(mode)
