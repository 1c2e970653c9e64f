""".gitignore-aware tree walking, shared by glob_search and grep_search.

Ignore files are read as ripgrep does (``--no-require-git``); their patterns are gitignore
patterns evaluated by pathspec. Patterns the *model* gives (``--glob`` overrides) are in the
app's own glob dialect, see ``app.core.globs``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core.safe_read import UnsafeReadError, read_project_file
from app.core.tools.fs.paths import describe_os_error

if TYPE_CHECKING:
    import pathspec

IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")  # later files take precedence, as in rg


def _load_gitignore(dir_path: str) -> pathspec.GitIgnoreSpec | None:
    """The ignore rules of one directory: .gitignore, then .ignore and .rgignore (ripgrep's)."""
    import pathspec  # only when a folder has a .gitignore (and warmed up before runs)

    lines: list[str] = []
    for name in IGNORE_FILES:
        try:  # a FIFO or device named .gitignore is skipped, never waited on
            raw = read_project_file(os.path.join(dir_path, name), max_bytes=1 << 20,
                                    too_large="truncate")
        except UnsafeReadError:
            continue
        lines.extend(raw.decode("utf-8", "replace").splitlines())
    if not any(ln.strip() and not ln.startswith("#") for ln in lines):
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # a malformed pattern must not break searching
        return None


@dataclass(frozen=True)
class GitIgnore:
    """The ignore rules in force in one directory; deeper files override shallower ones.

    Like ripgrep (with ``--no-require-git``): .gitignore (plus .ignore and .rgignore) files of
    the ancestors apply up to and including the first one that holds a ``.git`` entry; a nested
    repository starts afresh.
    """

    levels: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()

    @classmethod
    def for_root(cls, root: str) -> GitIgnore:
        if os.path.lexists(os.path.join(root, ".git")):
            return cls()
        levels: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        cur = root
        while True:
            parent = os.path.dirname(cur)
            if parent == cur:
                break
            cur = parent
            spec = _load_gitignore(cur)
            if spec is not None:
                levels.append((cur, spec))
            if os.path.lexists(os.path.join(cur, ".git")):
                break
        levels.reverse()
        # An explicitly requested root is searched even if an ancestor ignores it (as rg does);
        # the ancestor rules that ignore it would otherwise swallow everything below it.
        kept = tuple((base, spec) for base, spec in levels
                     if not _spec_says(spec, _rel(root, base) + "/"))
        return cls(kept)

    def child(self, dir_path: str, has_git: bool) -> GitIgnore:
        spec = _load_gitignore(dir_path)
        base = () if has_git else self.levels
        if spec is None:
            return self if not has_git else GitIgnore(())
        return GitIgnore((*base, (dir_path, spec)))

    def ignored(self, path: str, is_dir: bool) -> bool:
        for base, spec in reversed(self.levels):
            rel = _rel(path, base)
            verdict = spec.check_file(rel + "/" if is_dir else rel).include
            if verdict is not None:
                return bool(verdict)
        return False


def _rel(path: str, base: str) -> str:
    rel = path[len(base):].lstrip("/" + os.sep)
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


def _spec_says(spec: pathspec.GitIgnoreSpec, rel: str) -> bool:
    return bool(spec.check_file(rel).include)


@dataclass(frozen=True)
class WalkItem:
    path: str  # absolute
    rel: str  # relative to the walk root, "/"-separated
    is_dir: bool
    is_symlink: bool
    entry: os.DirEntry[str]


@dataclass
class WalkStats:
    errors: list[str] = field(default_factory=list)
    stopped: str | None = None


Override = Callable[[str, bool], "bool | None"]


def walk_tree(root: str, *, gitignore: bool = True, override: Override | None = None,
              max_depth: int | None = None, stats: WalkStats | None = None,
              cancel: threading.Event | None = None,
              descend: Callable[[str], bool] | None = None) -> Iterator[WalkItem]:
    """Yield every entry below ``root`` that .gitignore does not exclude; never enters .git.

    Symlinked directories are reported but not entered (no loops, no escaping the tree).
    ``override(rel, is_dir)`` returns True (include, ignore rules notwithstanding), False
    (exclude) or None (let .gitignore decide), like ripgrep's ``--glob``.
    """
    stats = stats if stats is not None else WalkStats()
    base_rules = GitIgnore.for_root(root) if gitignore else GitIgnore()
    stack: list[tuple[str, str, GitIgnore, int]] = [(root, "", base_rules, 1)]
    while stack:
        if cancel is not None and cancel.is_set():
            stats.stopped = "cancelled"
            return
        dir_path, dir_rel, rules, depth = stack.pop()
        try:
            with os.scandir(dir_path) as it:
                entries = list(it)
        except OSError as exc:
            stats.errors.append(describe_os_error(exc, dir_path))
            continue
        if gitignore:
            has_git = any(e.name == ".git" for e in entries)
            # The root's own .git was handled by GitIgnore.for_root.
            rules = rules.child(dir_path, has_git and dir_path != root)
        subdirs = []
        for entry in entries:
            name = entry.name
            if name == ".git":
                continue
            rel = f"{dir_rel}/{name}" if dir_rel else name
            try:
                is_symlink = entry.is_symlink()
                is_dir = not is_symlink and entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            verdict = override(rel, is_dir) if override is not None else None
            if verdict is False:
                continue
            if verdict is None and rules.levels and rules.ignored(entry.path, is_dir):
                continue
            yield WalkItem(entry.path, rel, is_dir, is_symlink, entry)
            if is_dir and (max_depth is None or depth < max_depth) and (
                    descend is None or descend(rel)):
                subdirs.append((entry.path, rel, rules, depth + 1))
        stack.extend(reversed(subdirs))

