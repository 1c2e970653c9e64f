"""Make invisible and deceptive characters visible, so what a person reads is what runs.

Why: a tool input or result can hide text from a person reading it in the approval dialog, a
tool card or the history: ANSI escape sequences recolour or erase, ``\\r`` overwrites a line,
bidi overrides (U+202E) reverse what follows, zero-width characters split words invisibly.
Everything shown to a person passes through :func:`make_visible`, which replaces each such
character with a marked escape (``⟦U+202E⟧``, ``⟦ESC⟧``) and leaves ordinary text — newlines,
tabs, ``\\r\\n`` line ends and printable characters of every script — untouched.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["has_invisible", "make_visible"]

_NAMED = {
    "\x1b": "ESC",
    "\r": "CR",
    "\x00": "NUL",
    "\x07": "BEL",
    "\x08": "BS",
    "\x0b": "VT",
    "\x0c": "FF",
    "\x7f": "DEL",
}

# Categories shown as escapes: controls, formats (bidi, zero-width), surrogates, private use,
# unassigned, line/paragraph separators. Zs other than the plain space is also marked: a
# no-break or ideographic space looks like a space but is not one to a program.
_MARKED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})

# Fast path: text made only of printable ASCII, newlines and tabs needs no work.
_PLAIN_RE = re.compile(r"[\x20-\x7e\n\t]*")


def _escape(ch: str) -> str:
    name = _NAMED.get(ch)
    if name is not None:
        return f"⟦{name}⟧"
    return f"⟦U+{ord(ch):04X}⟧"


def _needs_escape(ch: str) -> bool:
    if ch in "\n\t" or ch == " ":
        return False
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return True
    if code < 0x7F:
        return False
    return unicodedata.category(ch) in _MARKED_CATEGORIES


def make_visible(text: str) -> str:
    """``text`` with every control, format, bidi, zero-width or odd space character escaped.

    ``\\r\\n`` is kept as a line end; a lone ``\\r`` (which overwrites the line on a terminal)
    becomes ``⟦CR⟧``. The marker brackets ``⟦`` ``⟧`` themselves are left as they are: they are
    printable and cannot hide anything.
    """
    if _PLAIN_RE.fullmatch(text):
        return text
    out: list[str] = []
    n = len(text)
    for i, ch in enumerate(text):
        if ch == "\r" and i + 1 < n and text[i + 1] == "\n":
            out.append(ch)
        elif _needs_escape(ch):
            out.append(_escape(ch))
        else:
            out.append(ch)
    return "".join(out)


def has_invisible(text: str) -> bool:
    """Whether :func:`make_visible` would change ``text``."""
    return make_visible(text) != text
