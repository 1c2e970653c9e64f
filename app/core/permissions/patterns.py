"""Wildcard patterns of rules, compiled once (cached) to matchers.

- tool patterns: case-insensitive (both sides lower-cased), whole name (``git_*`` matches
  ``git_status``, not ``my_git_status``); only ``*`` is special, every other character, regex
  metacharacters included, is literal.
- text input patterns: case-sensitive, ``*`` matches any run of characters; nothing else is
  special except the escapes below.
- path input patterns: the app's one glob dialect, the same the file tools' globs use
  (``app.core.globs``): ``*`` and ``?`` stay inside one folder, ``**`` as a whole component
  crosses folders, ``[...]`` classes, ``{a,b}``; ``dir/**`` matches everything inside ``dir``
  but not ``dir`` itself (gitwildmatch). A leading ``~`` is the home folder.

Input patterns (text and path) say "this character literally" with the fnmatch idiom of a
one-character class: ``[*]``, ``[[]``, ``[?]``, ``[{]``, ``[\\]``. ``escape_pattern`` writes any
text that way, so a rule can name a folder called ``build*`` or a command ``ls *.py`` exactly. In
path patterns these are ordinary classes of the glob dialect; in text patterns those five
three-character sequences are the only escapes, and any other ``[`` is literal.

Path patterns written before the dialect was shared with the file tools read differently where
they contain ``?``, ``[abc]``, ``{a,b}``, ``\\``, a non-component ``**`` (``a**b`` is now one
``*``), or end in ``/**`` (no longer matching the folder itself). Rules the app suggested read
the same unless their path itself held ``?``, ``{`` or ``\\``: suggestions escaped only ``*`` and
``[`` then, and never wrote ``**``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import lru_cache

from app.core.globs import compile_glob, escape_glob

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
# Exactly what escape_pattern writes, so its output is literal in text patterns too.
_ESCAPES = {f"[{c}]": c for c in "*[?{\\"}


def escape_pattern(text: str) -> str:
    """``text`` as an input pattern that matches exactly ``text`` (text and path patterns)."""
    return escape_glob(text)


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
    if "*" not in pattern and "[" not in pattern:
        return pattern.__eq__
    tokens = _tokens(pattern)
    if None not in tokens:
        return "".join(tokens).__eq__  # type: ignore[arg-type]
    regex = "".join(".*" if token is None else re.escape(token)
                    for i, token in enumerate(tokens)
                    if not (token is None and i > 0 and tokens[i - 1] is None))
    return re.compile(regex, re.DOTALL).fullmatch  # type: ignore[return-value]


@lru_cache(maxsize=4096)
def compile_path_pattern(pattern: str) -> Matcher:
    if pattern.startswith("~"):
        # Only the home folder is expanded, and escaped: a home path holding `[` or `*` must
        # not turn into wildcards.
        head, sep, rest = pattern.partition("/")
        home = os.path.expanduser(head)
        if home != head:
            pattern = escape_glob(home) + sep + rest
    # compile_glob caches too, but this cache also skips expanduser on the hot path.
    return compile_glob(pattern).fullmatch  # type: ignore[return-value]


def is_relative_path_pattern(pattern: str) -> bool:
    return not pattern.startswith(("/", "~"))
