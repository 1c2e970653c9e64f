"""Ignore and attribute files git would block on: found before git runs, and hidden from it.

Git opens every ``.gitignore`` and ``.gitattributes`` of the folders it walks with a plain
``open``: a FIFO there makes that open wait for a writer forever (``mkfifo .gitignore`` hangs
``git status``; a FIFO ``.gitattributes`` hangs whatever hashes a file), and a device could
feed it endless bytes. Symlinks and sockets are harmless (git opens these files without
following links, and a socket cannot be opened), so only FIFOs and devices are looked for.

The same listing finds the names git refuses to record (``.GIT``, ``git~1``, a ``.git`` in a
subfolder): checkpoints report them as not covered instead of losing them silently.

:class:`RuleFileGuard` keeps the modification time of every folder git would walk (the
project's folders minus ``.git``, nested repositories and ignored folders): a rule file is
created in a folder, so only folders whose time changed are listed again; the others cost one
``stat`` each. Whatever it finds counts as absent: git runs in a bubblewrap mount namespace
(no sandbox: the same view of the machine) in which an empty regular file is mounted over each
such entry. Where bubblewrap is missing, :meth:`RuleFileGuard.wrapper` raises
:class:`UnsafeRuleFile`, so a checkpoint fails at once instead of hanging.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

__all__ = ["RULE_FILE_NAMES", "RuleFileGuard", "UnsafeRuleFile", "refused_name"]

RULE_FILE_NAMES = (b".gitignore", b".gitattributes")


class UnsafeRuleFile(RuntimeError):
    """A rule file git would block on, and no way to hide it from git here."""


class RuleFileGuard:
    """The blocking rule files of one work tree (see the module docstring)."""

    def __init__(self, work_tree: Path, empty_file: Path, skip_names: Iterable[str] = ()):
        self._root = os.fsencode(work_tree)
        self._empty = empty_file
        self._skip_names = {os.fsencode(n.strip("/")) for n in skip_names if n.endswith("/")}
        self._skip_names.add(b".git")
        self._folders: dict[bytes, int] = {}  # relative folder -> mtime_ns when listed
        self._children: dict[bytes, set[bytes]] = {}
        self._unsafe: dict[bytes, set[bytes]] = {}  # folder -> its blocking rule files
        self._refused: dict[bytes, set[bytes]] = {}  # folder -> names git never records
        self._gitignores: set[bytes] = set()  # folders with a regular .gitignore
        self._ignored: set[bytes] = set()
        self.changed = True  # whether the last scan found a folder that changed

    def set_ignored(self, folders: Iterable[bytes]) -> None:
        """Folders git reported as ignored or as repositories of their own (with a trailing
        ``/``): git does not walk them."""
        self._ignored = {f.rstrip(b"/") for f in folders if f.endswith(b"/")}
        for folder in self._ignored & set(self._folders):
            self._forget(folder)

    def scan(self) -> list[bytes]:
        """Relative paths of the blocking rule files now (folders listed again only where
        their modification time changed; :attr:`changed` says whether any was)."""
        self.changed = not self._folders
        lstat, root, folders = os.lstat, self._root + b"/", self._folders
        changed: list[bytes] = []
        for folder, known_mtime in folders.items():  # the common case: one lstat each
            try:
                if lstat(root + folder if folder else self._root).st_mtime_ns == known_mtime:
                    continue
            except OSError:
                pass
            changed.append(folder)
        pending = [b""] if not folders else changed
        while pending:
            folder = pending.pop()
            self.changed = True
            try:
                mtime = os.lstat(self._abs(folder)).st_mtime_ns
            except OSError:
                self._forget(folder)
                continue
            known = self._children.get(folder, set())
            found = self._list(folder, mtime)
            pending += [f for f in found if f not in self._folders]
            for gone in known - set(found):
                self._forget(gone)
        return sorted(folder + b"/" + name if folder else name
                      for folder, names in self._unsafe.items() for name in names)

    def wrapper(self, unsafe: list[bytes]) -> tuple[str, ...]:
        """The argv prefix that runs git with ``unsafe`` hidden (empty when none)."""
        if not unsafe:
            return ()
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise UnsafeRuleFile(
                f"{os.fsdecode(unsafe[0])} is not a regular file (a FIFO or device) and git "
                "would block reading it; remove it (checkpoints need bubblewrap to work "
                "around it)")
        self._empty.touch(exist_ok=True)
        argv = [bwrap, "--dev-bind", "/", "/"]
        for rel in unsafe:
            argv += ["--ro-bind", str(self._empty), os.fsdecode(self._abs(rel))]
        return (*argv, "--")

    def _list(self, folder: bytes, mtime: int) -> list[bytes]:
        subfolders: list[bytes] = []
        unsafe: set[bytes] = set()
        refused: set[bytes] = set()
        gitignore = False
        try:
            with os.scandir(self._abs(folder)) as entries:
                for entry in entries:
                    name = entry.name
                    if name in RULE_FILE_NAMES:
                        mode = entry.stat(follow_symlinks=False).st_mode
                        if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                            unsafe.add(name)
                        gitignore = gitignore or (name == b".gitignore" and stat.S_ISREG(mode))
                    elif refused_name(name):
                        if folder or name != b".git":  # the project's own repository
                            refused.add(name)
                    elif name not in self._skip_names and entry.is_dir(follow_symlinks=False):
                        rel = folder + b"/" + name if folder else name
                        if not self._is_ignored(rel):
                            subfolders.append(rel)
        except OSError:
            self._forget(folder)
            return []
        self._folders[folder] = mtime
        self._children[folder] = set(subfolders)
        if gitignore:
            self._gitignores.add(folder)
        else:
            self._gitignores.discard(folder)
        for found, table in ((unsafe, self._unsafe), (refused, self._refused)):
            if found:
                table[folder] = found
            else:
                table.pop(folder, None)
        return subfolders

    def refused(self) -> list[bytes]:
        """Entries git never records, as of the last :meth:`scan`: names it refuses (``.GIT``,
        ``git~1``, ``.git`` in a subfolder: inside a nested repository that git lists, too,
        until :meth:`set_ignored` is told of it)."""
        return sorted(folder + b"/" + name if folder else name
                      for folder, names in self._refused.items() for name in names)

    def ignore_files(self) -> list[bytes]:
        """The regular ``.gitignore`` files git reads, as of the last :meth:`scan` (an edit
        in place does not change its folder's time: compare their contents)."""
        return sorted(f + b"/.gitignore" if f else b".gitignore" for f in self._gitignores)

    def _forget(self, folder: bytes) -> None:
        self._folders.pop(folder, None)
        self._gitignores.discard(folder)
        self._unsafe.pop(folder, None)
        self._refused.pop(folder, None)
        for child in self._children.pop(folder, set()):
            self._forget(child)

    def _is_ignored(self, folder: bytes) -> bool:
        return folder in self._ignored

    def _abs(self, rel: bytes) -> bytes:
        return os.path.join(self._root, rel) if rel else self._root


def refused_name(name: bytes) -> bool:
    """A path component git refuses to record (``verify_path``, with the NTFS protections
    every git since 2.24 applies): ``.git`` in any case and with trailing dots or spaces, its
    short name ``git~1``, and ``.git:`` stream names."""
    lower = name.lower()
    return lower.rstrip(b". ") == b".git" or lower == b"git~1" or lower.startswith(b".git:")
