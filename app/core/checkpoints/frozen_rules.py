"""A run's ignore rules, fixed when it starts: what its checkpoints record does not move when a
call edits, adds or removes a ``.gitignore`` half-way.

Without this, one call appends a file's name to ``.gitignore`` and the next call's rewrite of
that file is "ignored": no checkpoint holds it, and undo cannot bring the file back (or, the
other way round, un-ignoring a data folder makes undo delete it as "created by the run").

:func:`freeze` reads every ``.gitignore`` git would read now (regular files only: a FIFO,
device or symlink counts as absent, as it does for git here). While the project's rule files
are still those bytes, git's own ``status`` is right and costs nothing more; once they differ,
:func:`frozen_status` asks git with the frozen rules instead: each folder's patterns are
rewritten as patterns of the top folder (``/sub/**/name`` for a bare name in
``sub/.gitignore``, ``/sub/a/b`` for a path), in git's order of precedence, and handed to
``git ls-files --exclude-from`` without ``--exclude-standard`` so that no ``.gitignore`` of the
work tree is read.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.core.checkpoints.shadow_repo import ShadowRepo, Status
from app.core.safe_read import UnsafeReadError, read_project_file

__all__ = ["FrozenRules", "freeze", "frozen_status"]

_MAX_RULE_FILE_BYTES = 1 << 20
_GLOB_SPECIAL = re.compile(rb"([*?\[\\])")
_BOM = b"\xef\xbb\xbf"  # git skips it at the start of an ignore file

Fingerprint = tuple[int, int, int, int]  # inode, size, mtime_ns, ctime_ns


@dataclass(frozen=True)
class FrozenRules:
    """The ``.gitignore`` files (path relative to the work tree -> bytes) of one moment."""

    files: dict[bytes, bytes]
    stamps: dict[bytes, Fingerprint]

    def same_as_now(self, root: Path, rule_files: Sequence[bytes]) -> bool:
        """Whether ``rule_files`` (the regular ``.gitignore`` files git reads now) are still
        exactly the frozen ones: one ``lstat`` each while untouched."""
        if set(rule_files) != set(self.files):
            return False
        for rel in rule_files:
            path = os.path.join(os.fsencode(root), rel)
            try:
                if _fingerprint(os.lstat(path)) == self.stamps[rel]:
                    continue
                if read_project_file(os.fsdecode(path), max_bytes=_MAX_RULE_FILE_BYTES,
                                     follow_symlinks=False) != self.files[rel]:
                    return False
            except (OSError, UnsafeReadError):
                return False
        return True

    def exclude_lines(self, base: Iterable[str]) -> bytes:
        """One exclude file with ``base`` (the shadow's own excludes, the weakest) and then
        every frozen ``.gitignore``, shallower folders first: in one list the last matching
        pattern wins, as a deeper ``.gitignore`` beats a shallower one in git."""
        lines = [os.fsencode(b) for b in base]
        for rel in sorted(self.files, key=lambda r: (r.count(b"/"), r)):
            lines += _rebased(rel.rpartition(b"/")[0], self.files[rel].removeprefix(_BOM))
        return b"".join(line + b"\n" for line in lines)


def freeze(root: Path, rule_files: Sequence[bytes]) -> FrozenRules:
    """The ``.gitignore`` files among ``rule_files`` as they are now; one that cannot be read
    as a regular file (a FIFO, a device, a symlink, too large) counts as absent."""
    files: dict[bytes, bytes] = {}
    stamps: dict[bytes, Fingerprint] = {}
    base = os.fsencode(root)
    for rel in rule_files:
        path = os.path.join(base, rel)
        try:
            st = os.lstat(path)
            files[rel] = read_project_file(os.fsdecode(path), max_bytes=_MAX_RULE_FILE_BYTES,
                                           follow_symlinks=False)
        except (OSError, UnsafeReadError):
            continue
        stamps[rel] = _fingerprint(st)
    return FrozenRules(files, stamps)


def frozen_status(repo: ShadowRepo, rules: FrozenRules, base: Iterable[str]) -> Status:
    """What ``git status`` would say of the work tree if its ignore rules were ``rules``."""
    text = rules.exclude_lines(base)
    excludes = repo.git_dir / "info" / f"frozen-{hashlib.sha256(text).hexdigest()[:16]}"
    if not excludes.exists():
        excludes.parent.mkdir(parents=True, exist_ok=True)
        excludes.write_bytes(text)
    exclude_from = f"--exclude-from={excludes}"
    result = Status([], [])
    tracked = repo.run("status", "--porcelain=v2", "-z", "--untracked-files=no",
                       "--no-renames", "--ignore-submodules=all")
    for record in tracked.split(b"\0"):
        if record[:1] == b"1":
            result.changed.append((record.split(b" ", 8)[8], True))
        elif record[:1] == b"u":
            result.changed.append((record.split(b" ", 10)[10], True))
    others = repo.run("ls-files", "-z", "--others", exclude_from)
    result.changed += [(path, False) for path in others.split(b"\0") if path]
    # With --directory, git lists a folder that holds an ignored file as well as the file:
    # a folder counts as ignored whole only when nothing under it is listed.
    ignored = [p for p in repo.run("ls-files", "-z", "--others", "--ignored", "--directory",
                                   exclude_from).split(b"\0") if p]
    listed = sorted(ignored)
    result.ignored = [p for n, p in enumerate(listed)
                      if not (p.endswith(b"/") and n + 1 < len(listed)
                              and listed[n + 1].startswith(p))]
    return result


def _rebased(folder: bytes, text: bytes) -> list[bytes]:
    """The patterns of ``folder``'s ``.gitignore`` as patterns of the top folder."""
    if not folder:
        return [line for line in text.split(b"\n") if line and not line.startswith(b"#")]
    # a line cannot hold a newline: "?" stands for it (matching a few more names can only
    # leave more unrecorded, which unasked calls find read-only)
    escaped = _GLOB_SPECIAL.sub(rb"\\\1", folder).replace(b"\n", b"?").replace(b"\r", b"?")
    prefix = b"/" + escaped + b"/"
    out: list[bytes] = []
    for line in text.split(b"\n"):
        if not line or line.startswith(b"#"):
            continue
        negated = line.startswith(b"!")
        body = line[1:] if negated else line
        shape = body.rstrip(b" \r").removesuffix(b"/")
        if not shape:
            continue
        # git: a pattern with a slash (leading or inside) is relative to its folder; a bare
        # name matches at any depth below it
        rebased = prefix + body.removeprefix(b"/") if b"/" in shape else prefix + b"**/" + body
        out.append((b"!" if negated else b"") + rebased)
    return out


def _fingerprint(st: os.stat_result) -> Fingerprint:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
