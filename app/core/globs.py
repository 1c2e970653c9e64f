"""The app's one glob dialect, for paths: file tools' globs and permission path patterns.

A pattern matches a whole "/"-separated path (``fullmatch``), character for character except:

- ``*`` any run of characters inside one folder (never ``/``); ``?`` one such character.
- ``[abc]``, ``[a-z]``, ``[!abc]`` (or ``[^abc]``): one character from / not from the class,
  never ``/``. A ``]`` right after the opening ``[`` (or ``[!``) is a member. An unclosed ``[``
  is literal. Hence ``[*]`` is a literal star and ``[[]`` a literal ``[``: the escape idiom the
  permission rules have always used, and what ``escape_glob`` writes.
- ``**`` as a whole path component crosses folders, as in git's wildmatch (gitignore):
  ``**/x`` matches ``x`` at any depth (``x`` itself too), ``a/**/b`` matches ``a/b`` and
  ``a/x/y/b``, ``dir/**`` matches ``dir`` itself and everything inside it (git's wildmatch leaves
  ``dir`` out; we include it so a deny rule on ``~/.ssh/**`` also covers the folder), and a
  lone ``**`` matches everything. A run of stars that is not a whole component (``a**b``) is one
  ``*``, as in gitwildmatch; so ``**`` never leaks out of a folder by accident.
- ``{a,b}`` alternatives (nestable; beyond gitwildmatch, as in ripgrep, because models write
  ``*.{ts,tsx}``). A ``{`` without its ``}`` is literal; ``,`` and ``}`` are literal outside one.
- ``\\x`` is a literal ``x``.

Unlike a .gitignore line there is no implicit "at any depth" and no "a matched folder matches
its contents": ``src`` matches only ``src``. ``gitignore_style_matcher`` adds the "name at any
depth" reading for ripgrep-style ``--glob`` overrides.

Compiled patterns are cached: the permission service compiles each rule's pattern once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

# `\` is left out: a path with a backslash but no other magic is still taken literally.
_GLOB_MAGIC = re.compile(r"[*?\[{]")
# The characters escape_glob puts in a one-character class.
_SPECIAL = frozenset("*?[{\\")


def has_glob_magic(text: str) -> bool:
    """Whether ``text`` contains any character the dialect may read specially."""
    return _GLOB_MAGIC.search(text) is not None


def escape_glob(text: str) -> str:
    """A pattern matching exactly ``text``: each special character as a one-character class."""
    return "".join(f"[{c}]" if c in _SPECIAL else c for c in text)


def glob_to_regex(pattern: str) -> str:
    """Translate a pattern of the dialect (see the module docstring) to a regex for fullmatch."""
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0  # open {…} groups
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            # One regex piece per run of stars: a run of `[^/]*` pieces backtracks
            # polynomially on a failing match, and permission patterns are typed by people.
            at_start = i == 0 or pattern[i - 1] == "/"
            if j - i >= 2 and at_start and (j == n or pattern[j] == "/"):
                if j < n:
                    out.append("(?:.*/)?")  # `**/` is zero or more folders
                    j += 1
                elif i == 0:
                    out.append(".*")  # `**` alone: everything
                else:
                    # `dir/**`: dir and everything inside it. Including dir itself keeps a
                    # deny rule such as `~/.ssh/**` covering a call on the folder `~/.ssh`.
                    if out and out[-1] == "/":
                        out.pop()
                        out.append("(?:/.*)?")
                    else:  # `**/**`: the folder part already matched; at least one name
                        out.append(".+")
            else:
                out.append("[^/]*")
            i = j
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            end = _class_end(pattern, i)
            if end is None:
                out.append(re.escape(c))
            else:
                out.append(_class_regex(pattern[i + 1:end]))
                i = end
        elif c == "{" and _matching_brace(pattern, i) is not None:
            depth += 1
            out.append("(?:")
        elif c == "," and depth:
            out.append("|")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _class_end(pattern: str, start: int) -> int | None:
    """Index of the ``]`` closing the class opened at ``start``, or None if it is unclosed."""
    j = start + 1
    n = len(pattern)
    if j < n and pattern[j] in "!^":
        j += 1
    if j < n and pattern[j] == "]":
        j += 1  # a leading `]` is a member
    while j < n and pattern[j] != "]":
        j += 1
    return j if j < n else None


def _class_regex(body: str) -> str:
    negated = body[:1] in ("!", "^")
    if negated:
        body = body[1:]
    # Every member escaped (so `[`, `\`, `&`, `~`, `|` are plain members) except a `-` between
    # two members, which keeps its range meaning.
    last = len(body) - 1
    members = "".join("-" if ch == "-" and 0 < k < last else re.escape(ch)
                      for k, ch in enumerate(body))
    if negated:
        return f"[^/{members}]"
    # A class never matches the folder separator, even through a range such as `[+-0]`.
    return f"(?!/)[{members}]" if "/" in body or "-" in body else f"[{members}]"


def _matching_brace(pattern: str, start: int) -> int | None:
    level = 0
    i = start
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            end = _class_end(pattern, i)
            if end is not None:  # braces inside a class are members, not groups
                i = end + 1
                continue
        if ch == "{":
            level += 1
        elif ch == "}":
            level -= 1
            if level == 0:
                return i
        i += 1
    return None


@lru_cache(maxsize=4096)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The compiled pattern; use ``.fullmatch`` on a "/"-separated path."""
    return re.compile(glob_to_regex(pattern), re.DOTALL)


def gitignore_style_matcher(pattern: str) -> Callable[[str, bool], bool]:
    """Match like a ripgrep ``--glob``: no '/' → any depth by name; with '/' → from the root.

    A trailing ``/`` restricts the pattern to folders.
    """
    dir_only = pattern.endswith("/")
    body = pattern.rstrip("/")
    if body.startswith("/"):
        rx = compile_glob(body.lstrip("/"))
    elif "/" in body:
        rx = compile_glob(body)
    else:
        rx = compile_glob("**/" + body)

    def matches(rel: str, is_dir: bool) -> bool:
        if dir_only and not is_dir:
            return False
        return rx.fullmatch(rel) is not None

    return matches
