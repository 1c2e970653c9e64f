"""Wildcard patterns of rules, compiled once to regexes.

Only ``*`` is special; every other character, regex metacharacters included, is literal.
- tool patterns: case-insensitive (both sides lower-cased), whole name (``git_*`` matches
  ``git_status``, not ``my_git_status``).
- text input patterns: case-sensitive, ``*`` matches any run of characters.
- path input patterns: case-sensitive glob, ``*`` stays inside one folder, ``**`` crosses folders.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import lru_cache

Matcher = Callable[[str], bool]


def _wildcard_regex(pattern: str) -> str:
    return ".*".join(re.escape(part) for part in re.split(r"\*+", pattern))


@lru_cache(maxsize=16384)
def compile_tool_pattern(pattern: str) -> Matcher:
    """Matcher for an already lower-cased tool name (see ``tool_pattern_literals``)."""
    lowered = pattern.lower()
    if "*" not in lowered:
        return lowered.__eq__
    return re.compile(_wildcard_regex(lowered), re.DOTALL).fullmatch  # type: ignore[return-value]


def tool_pattern_literals(pattern: str) -> tuple[str, str]:
    """(literal prefix, longest literal segment) of a lower-cased pattern, for indexing.

    Any name the pattern matches starts with the prefix and contains the segment.
    """
    parts = pattern.lower().split("*")
    return parts[0], max(parts, key=len)


@lru_cache(maxsize=4096)
def compile_text_pattern(pattern: str) -> Matcher:
    if "*" not in pattern:
        return pattern.__eq__
    return re.compile(_wildcard_regex(pattern), re.DOTALL).fullmatch  # type: ignore[return-value]


def _glob_regex(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("**", i):
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            at_segment_start = i == 0 or pattern[i - 1] == "/"
            if at_segment_start and j < n and pattern[j] == "/":
                out.append("(?:.*/)?")  # `**/` also matches zero folders
                j += 1
            elif at_segment_start and j == n and i > 0:
                out.pop()  # `dir/**` also matches `dir` itself
                out.append("(?:/.*)?")
            else:
                out.append(".*")
            i = j
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


@lru_cache(maxsize=4096)
def compile_path_pattern(pattern: str) -> Matcher:
    if pattern.startswith("~"):
        pattern = os.path.expanduser(pattern)
    return re.compile(_glob_regex(pattern), re.DOTALL).fullmatch  # type: ignore[return-value]


def is_relative_path_pattern(pattern: str) -> bool:
    return not pattern.startswith(("/", "~"))
