"""What grep_search's backends share: the request, per-file hits, the outcome, errors."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from app.core.sensitive_paths import SensitivePaths, is_secret_name


class GrepError(Exception):
    """A search that cannot run; the message tells the model how to fix the call."""


@dataclass
class FileHits:
    path: str  # as shown to the model
    count: int = 0  # matching lines
    lines: list[tuple[int, bool, str]] = field(default_factory=list)  # (line no, is match, text)
    # rg's output block for this file, parsed only if a page shows it (results can be huge).
    raw: bytes | None = field(default=None, repr=False, compare=False)
    raw_lines: int = field(default=0, repr=False, compare=False)

    def output_lines(self) -> list[tuple[int, bool, str]]:
        if self.raw is not None:
            self.lines = parse_block(self.raw)
            self.raw = None
        return self.lines

    def output_count(self) -> int:
        return self.raw_lines if self.raw is not None else len(self.lines)


@dataclass
class Outcome:
    files: list[FileHits]
    backend: str
    errors: list[str] = field(default_factory=list)
    incomplete: str | None = None
    skipped: list[str] = field(default_factory=list)
    # Files with a secret's name under the searched folder, left out (python backend lists
    # them; ripgrep excludes them by glob without saying which).
    secrets_not_searched: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Request:
    pattern: str
    root: Path  # resolved search path
    root_is_file: bool
    root_arg: str  # how the root is shown (and passed to rg with cwd = working dir)
    file_pattern: str | None
    context: int
    ignore_case: bool
    mode: str
    cwd: Path
    timeout: float
    # The person's own secret-name patterns ("*.secret"), left out like the built-in ones.
    secret_names: tuple[str, ...] = ()

    def is_secret(self, name: str) -> bool:
        """Is a file of this name one the search leaves out (a secret's name)?"""
        return is_secret_name(name) or bool(
            self.secret_names and _person_names(self.secret_names).name_is_secret(name))


@functools.lru_cache(maxsize=8)
def _person_names(names: tuple[str, ...]) -> SensitivePaths:
    return SensitivePaths(names=names)


def compile_pattern(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.MULTILINE | (re.IGNORECASE if ignore_case else 0))
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        if "\\p" in exc.msg or "\\P" in exc.msg:
            where += " (Unicode classes like \\p{L} need ripgrep, which is not in use)"
        raise GrepError(
            f"Invalid regular expression {pattern!r}: {exc.msg}{where}. Escape characters "
            "that have a special meaning ( . * + ? ( ) [ ] { } | \\ ^ $ ) with a backslash to "
            "search for them literally, e.g. 'foo\\(' for 'foo('.") from None


# rg's content lines: "<line number>:" for a match, "<line number>-" for context.
_RG_LINE = re.compile(rb"(\d+)([:-])")


def parse_block(body: bytes) -> list[tuple[int, bool, str]]:
    """The lines of one file's rg ``--heading`` block (``FileHits`` parses them lazily)."""
    out = []
    for line in body.split(b"\n"):
        m = _RG_LINE.match(line)
        if m is not None:  # skips "--" group separators
            out.append((int(m[1]), m[2] == b":", line[m.end():].decode("utf-8", "replace")))
    return out
