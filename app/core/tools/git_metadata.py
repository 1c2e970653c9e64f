"""What git will execute from a project: the paths a program that runs unasked must never write.

The person's own git, run later outside every sandbox, runs code named by the repository: hooks,
``core.fsmonitor`` and friends in ``config``, configs pulled in by ``include.path`` /
``includeIf.*.path``, the ``core.hooksPath`` folder (``.husky/``, ``.githooks/``, often inside
the work tree), and the same in every other git dir it reaches — a submodule's (through its
``.git`` file and ``.git/modules/``), a linked worktree's (``worktrees/``), the shared one a
``commondir`` file names, a nested repository's ``.git``. :func:`git_metadata` derives that set
for the project and the write folders:

- ``own``: the git dirs of the folders' own repositories (found upward, as git finds them);
  at the read-write git level a shell ``git commit`` writes their objects, refs and index;
- ``code``: inside those, what can make git run code — ``config``, ``config.worktree``,
  ``hooks/``, ``info/``, ``commondir``, ``modules/`` and ``worktrees/`` (whole);
- ``nested``: every other git dir (nested repositories, bare repositories, gitdirs that
  ``.git`` files point to), always whole;
- ``pointers``: ``.git`` files (a changed pointer makes git use a planted git dir);
- ``targets``: every ``core.hooksPath`` target and include file named in any of those configs
  or in the person's global config (whatever its condition), a husky hook folder whole.

Configs are parsed here (``git_config.values``): no git is run, so none on PATH is trusted.
The result is cached and reused while the folders walked (``project_tree``) and every file and
folder read have the same stamps.

Residual: a path that does not exist cannot be mounted read-only, so at the read-write level a
program can create a missing ``commondir``, ``hooks/`` or hooksPath folder; ``GitMetadata.missing``
lists them and ``persistence`` names such new paths, for the check after the call.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.core.safe_read import read_project_text
from app.core.stamps import may_change_unseen
from app.core.tools.base import GitPermission
from app.core.tools.git_config.files import (
    Stamp,
    discover,
    include_target,
    read_gitfile,
    repository_dirs,
    stamp,
)
from app.core.tools.git_config.reader import SCAN_TIMEOUT_S, Deadline, GitSafetyError
from app.core.tools.git_config.values import config_values
from app.core.tools.project_tree import TreeScan, scan_tree

__all__ = ["GitMetadata", "git_metadata"]

_CODE_PARTS = ("config", "config.worktree", "hooks", "info", "commondir", "modules")
_WANTED = frozenset({"core.hookspath", "core.worktree", "include.path", "includeif.path"})
_MAX_INCLUDE_DEPTH = 10  # as git's own limit
_CACHE_SIZE = 16


@dataclass(frozen=True)
class GitMetadata:
    own: tuple[Path, ...]
    code: tuple[Path, ...]
    nested: tuple[Path, ...]
    pointers: tuple[Path, ...]
    targets: tuple[Path, ...]
    incomplete: str = ""  # non-empty: part of the folders could not be checked, and why

    def read_only(self, git_permission: GitPermission) -> tuple[Path, ...]:
        """What a program must not write at ``git_permission``: everything that runs code,
        and at the read-only level the own git dirs whole."""
        whole = self.own if git_permission is not GitPermission.READ_WRITE else ()
        return tuple(dict.fromkeys((*whole, *self.code, *self.nested, *self.pointers,
                                    *self.targets)))

    def missing(self) -> tuple[Path, ...]:
        """The code paths and targets that do not exist: a mount cannot keep a program from
        creating one, so a check after the call looks whether one appeared."""
        return tuple(p for p in (*self.code, *self.targets) if not os.path.lexists(p))

    def protecting(self, path: Path) -> Path | None:
        """The protected path that is or contains ``path`` (resolved), or None."""
        for protected in self.read_only(GitPermission.READ_ONLY):
            if path == protected or path.is_relative_to(protected):
                return protected
        return None


@dataclass(frozen=True)
class _Cached:
    metadata: GitMetadata
    scans: tuple[TreeScan, ...]
    stamps: tuple[tuple[str, Stamp], ...]


_cache: dict[tuple[str, ...], _Cached] = {}
_lock = threading.Lock()


def git_metadata(folders: Iterable[Path], *, home: str | None = None) -> GitMetadata:
    """The protected git paths of ``folders`` (the project and the write folders); see the
    module docstring. ``home``: for ``~`` in config values (default: ``$HOME``)."""
    roots = _roots(folders)
    home = os.environ.get("HOME", "") if home is None else home
    walked = [r for r in roots if not any(o != r and r.is_relative_to(o) for o in roots)]
    scans = tuple(scan_tree(r) for r in walked)
    key = (home, *map(str, roots))
    with _lock:
        cached = _cache.get(key)
    if cached is not None and len(cached.scans) == len(scans) and \
            all(a is b for a, b in zip(cached.scans, scans, strict=True)) and \
            all(stamp(p) == s for p, s in cached.stamps):
        return cached.metadata
    began = time.time_ns()
    build = _Build(home)
    metadata = build.run(roots, scans)
    racy = any(s is not None and may_change_unseen(s[0], began)
               for s in build.stamps.values())
    with _lock:
        if racy:
            _cache.pop(key, None)
        else:
            _cache[key] = _Cached(metadata, scans, tuple(build.stamps.items()))
            while len(_cache) > _CACHE_SIZE:
                _cache.pop(next(iter(_cache)))
    return metadata


def _roots(folders: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for folder in folders:
        try:
            resolved = Path(folder).resolve()
        except OSError:
            continue
        if resolved.is_dir() and resolved not in out:
            out.append(resolved)
    return out


def _real(path: Path) -> Path:
    with contextlib.suppress(OSError, RuntimeError):
        return path.resolve()
    return path


def _gitfile_target(path: Path) -> Path | None:
    target = read_gitfile(path)
    return _real(target) if target is not None else None


class _Build:
    """One derivation: the paths found so far and the stamps that prove them current."""

    def __init__(self, home: str) -> None:
        self.home = home
        self.stamps: dict[str, Stamp] = {}
        self.own: list[Path] = []
        self.code: list[Path] = []
        self.nested: list[Path] = []
        self.pointers: list[Path] = []
        self.targets: list[Path] = []
        self.tops: list[Path] = []  # work trees, for relative hooksPath values of any scope
        self.configs: list[tuple[Path, Path | None]] = []  # (config file, its repo's top)
        self.incomplete = ""
        self.deadline = Deadline(SCAN_TIMEOUT_S)
        self._entries: dict[str, list[tuple[str, str]]] = {}

    def run(self, roots: list[Path], scans: tuple[TreeScan, ...]) -> GitMetadata:
        for root in roots:
            self._own_repository(root)
        own_dotgits = {top / ".git" for top in self.tops}
        for scan in scans:
            if scan.incomplete:
                self.incomplete = scan.incomplete
            for gitdir in scan.git_dirs:
                if gitdir not in own_dotgits and gitdir not in self.own:
                    self._nested(gitdir, gitdir.parent if gitdir.name == ".git" else gitdir)
            for pointer in scan.git_files:
                if pointer not in own_dotgits:
                    self._pointer(pointer)
        self._read_configs()
        def unique(found: list[Path]) -> tuple[Path, ...]:
            return tuple(dict.fromkeys(_real(p) for p in found))
        return GitMetadata(unique(self.own), unique(self.code), unique(self.nested),
                           unique(self.pointers), unique(self.targets), self.incomplete)

    # -- repositories -----------------------------------------------------------------------

    def _own_repository(self, root: Path) -> None:
        found = discover(root)
        if found is None:
            for folder in (root, *root.parents):  # a repository created above it later
                self.stamps[str(folder)] = stamp(folder)
            return
        gitdir, commondir, top, walked = found
        for path in walked:
            self.stamps[str(path)] = stamp(path)
        gitdir, commondir = _real(gitdir), _real(commondir)
        work_tree = top if top is not None else gitdir
        self.tops.append(work_tree)
        if top is not None and (top / ".git").is_file():
            self.pointers.append(top / ".git")
        for repo in dict.fromkeys((gitdir, commondir)):
            if repo in self.own:
                continue
            self.own.append(repo)
            self._watch(*(repo / part for part in _CODE_PARTS))
            self.code += [repo / part for part in _CODE_PARTS]
            worktrees = repo / "worktrees"
            self._watch(worktrees)
            if gitdir.is_relative_to(worktrees):  # the project is a linked worktree of it
                with contextlib.suppress(OSError):
                    self.code += [w for w in worktrees.iterdir() if _real(w) != gitdir]
            else:
                self.code.append(worktrees)
            self.configs += [(repo / "config", work_tree), (repo / "config.worktree", work_tree)]
        self._other_git_dirs(gitdir, commondir)

    def _nested(self, gitdir: Path, top: Path) -> None:
        gitdir = _real(gitdir)
        if gitdir in self.own or gitdir in self.nested:
            return
        self.nested.append(gitdir)
        self.tops.append(top)
        self.configs += [(gitdir / "config", top), (gitdir / "config.worktree", top)]
        commondir = gitdir
        pointer = gitdir / "commondir"
        self._watch(pointer)
        if pointer.is_file():
            with contextlib.suppress(OSError):
                raw = Path(read_project_text(pointer).strip())
                commondir = _real(raw if raw.is_absolute() else gitdir / raw)
            if commondir not in self.own and commondir not in self.nested:
                self.nested.append(commondir)
                self.configs.append((commondir / "config", top))
        self._other_git_dirs(gitdir, commondir)

    def _pointer(self, pointer: Path) -> None:
        self.pointers.append(pointer)
        self._watch(pointer)
        target = _gitfile_target(pointer) if not pointer.is_symlink() else _real(pointer)
        if target is not None:
            self._watch(target)
            if target.is_dir():
                self._nested(target, pointer.parent)

    def _other_git_dirs(self, gitdir: Path, commondir: Path) -> None:
        """Configs of linked worktrees and submodules under them (their folders are protected
        whole through ``modules/`` and ``worktrees/``; their hooksPath and includes are read)."""
        try:
            found = repository_dirs(gitdir, commondir, self.stamps, self.deadline)
        except GitSafetyError as exc:
            self.incomplete = str(exc)
            return
        for repo in found:
            if repo not in (gitdir, commondir):
                top = self._work_tree(repo)
                self.configs += [(repo / "config", top), (repo / "config.worktree", top)]

    def _work_tree(self, gitdir: Path) -> Path:
        for key, value in self._config(gitdir / "config"):
            if key == "core.worktree" and value:
                return _real(gitdir / value)
        back = gitdir / "gitdir"  # a linked worktree's: the path of its .git file
        with contextlib.suppress(OSError):
            return _real(Path(read_project_text(back).strip())).parent
        return gitdir

    def _watch(self, *paths: Path) -> None:
        for path in paths:
            self.stamps[str(path)] = stamp(path)

    # -- configs ------------------------------------------------------------------------------

    def _read_configs(self) -> None:
        xdg = os.environ.get("XDG_CONFIG_HOME") or (
            os.path.join(self.home, ".config") if self.home else "")
        queue: list[tuple[Path, Path | None, int]] = [(f, top, 0) for f, top in self.configs]
        queue += [(Path(p), None, 0) for p in (
            os.path.join(self.home, ".gitconfig") if self.home else "",
            os.path.join(xdg, "git", "config") if xdg else "", "/etc/gitconfig") if p]
        global_hooks: list[str] = []
        done: set[tuple[str, str]] = set()
        while queue:
            file, top, depth = queue.pop()
            if (str(file), str(top)) in done:
                continue
            done.add((str(file), str(top)))
            self._watch(file)
            for key, value in self._config(file):
                if key == "core.hookspath" and value:
                    if top is None:
                        global_hooks.append(value)  # applies in every repository
                    else:
                        self._hooks_path(value, top)
                elif value and (key == "include.path" or key.startswith("includeif.")):
                    target = include_target(value, file, {"HOME": self.home})
                    if target is not None:
                        self.targets.append(target)
                        if depth < _MAX_INCLUDE_DEPTH:
                            queue.append((target, top, depth + 1))
        for value in global_hooks:
            for top in self.tops:
                self._hooks_path(value, top)

    def _hooks_path(self, value: str, top: Path) -> None:
        if value.startswith("~"):
            expanded = include_target(value, top, {"HOME": self.home})
            if expanded is None:
                return
            target = expanded
        else:
            target = Path(value) if os.path.isabs(value) else top / value
        target = _real(target)
        self.targets.append(target)
        # husky's hooksPath (.husky/_) runs the scripts one folder up
        for folder in (target, *target.parents):
            if folder.name == ".husky":
                self.targets.append(folder)
                break

    def _config(self, file: Path) -> list[tuple[str, str]]:
        key = str(file)
        if key not in self._entries:
            self._entries[key] = self._read(file)
        return self._entries[key]

    def _read(self, file: Path) -> list[tuple[str, str]]:
        if not file.is_file():
            return []
        self.deadline.left()
        return config_values(file, _WANTED)
