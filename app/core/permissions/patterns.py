"""Wildcard patterns of rules, compiled once to regexes.

Only ``*`` is special; every other character, regex metacharacters included, is literal.
- tool patterns: case-insensitive (both sides lower-cased), whole name (``git_*`` matches
  ``git_status``, not ``my_git_status``).
- text input patterns: case-sensitive, ``*`` matches any run of characters.
- path input patterns: case-sensitive glob, ``*`` stays inside one folder, ``**`` crosses folders.

Input patterns (text and path) can say "a literal star" with the fnmatch idiom ``[*]``, and "a
literal ``[``" with ``[[]``; ``escape_pattern`` writes any text that way, so a rule can name a
folder called ``build*`` or a command ``ls *.py`` exactly. Those two three-character sequences are
the only escapes: any other ``[`` is literal, as it always was. (Only patterns that contained
``[*]`` or ``[[]`` read differently than before escapes existed.)
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


# A parsed input pattern: literal characters, and None for each (unescaped) ``*``.
_Token = str | None
_ESCAPES = {"[*]": "*", "[[]": "["}


def escape_pattern(text: str) -> str:
    """``text`` as an input pattern that matches exactly ``text`` (text and path patterns)."""
    return text.replace("[", "[[]").replace("*", "[*]")


def has_wildcard(pattern: str) -> bool:
    """Whether an input pattern contains an unescaped ``*``."""
    return None in _tokens(pattern)


def unescape_pattern(pattern: str) -> str:
    """The pattern's text with escapes undone and each wildcard shown as ``*`` (for display)."""
    return "".join("*" if token is None else token for token in _tokens(pattern))


def _tokens(pattern: str) -> list[_Token]:
    out: list[_Token] = []
    i, n = 0, len(pattern)
    while i < n:
        escaped = _ESCAPES.get(pattern[i:i + 3]) if pattern[i] == "[" else None
        if escaped is not None:
            out.append(escaped)
            i += 3
        else:
            out.append(None if pattern[i] == "*" else pattern[i])
            i += 1
    return out


@lru_cache(maxsize=4096)
def compile_text_pattern(pattern: str) -> Matcher:
    if "*" not in pattern and "[[]" not in pattern:
        return pattern.__eq__
    tokens = _tokens(pattern)
    if None not in tokens:
        return "".join(tokens).__eq__  # type: ignore[arg-type]
    regex = "".join(".*" if token is None else re.escape(token)
                    for i, token in enumerate(tokens)
                    if not (token is None and i > 0 and tokens[i - 1] is None))
    return re.compile(regex, re.DOTALL).fullmatch  # type: ignore[return-value]


def _glob_regex(pattern: str) -> str:
    tokens = _tokens(pattern)
    out: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        token = tokens[i]
        if token is None and i + 1 < n and tokens[i + 1] is None:
            j = i
            while j < n and tokens[j] is None:
                j += 1
            at_segment_start = i == 0 or tokens[i - 1] == "/"
            if at_segment_start and j < n and tokens[j] == "/":
                out.append("(?:.*/)?")  # `**/` also matches zero folders
                j += 1
            elif at_segment_start and j == n and i > 0:
                out.pop()  # `dir/**` also matches `dir` itself
                out.append("(?:/.*)?")
            else:
                out.append(".*")
            i = j
        elif token is None:
            out.append("[^/]*")
            i += 1
        else:
            out.append(re.escape(token))
            i += 1
    return "".join(out)


@lru_cache(maxsize=4096)
def compile_path_pattern(pattern: str) -> Matcher:
    if pattern.startswith("~"):
        pattern = os.path.expanduser(pattern)
    return re.compile(_glob_regex(pattern), re.DOTALL).fullmatch  # type: ignore[return-value]


def is_relative_path_pattern(pattern: str) -> bool:
    return not pattern.startswith(("/", "~"))
