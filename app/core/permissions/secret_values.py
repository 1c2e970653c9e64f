"""Which values in a sensitive file's text are secrets (``extract_secrets``): the learning
half of the egress check (app.core.permissions.egress)."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Final
from urllib.parse import unquote

__all__ = ["MAX_SECRET_LEN", "MIN_SECRET_LEN", "extract_secrets"]

# The shortest value learnt as a secret (shorter ones match too much ordinary text).
MIN_SECRET_LEN: Final = 12
MAX_SECRET_LEN: Final = 16_384
"""A longer value is cut to its first this many characters."""

# -- what is a secret (learning) ---------------------------------------------------------------

_SECRETISH_KEY = re.compile(
    r"(?i)secret|token|passw|passwd|pwd|api_?key|apikey|access_?key|private|credential|auth|"
    r"salt|signature|session|cookie|dsn|bearer|(?:^|[_.\-])key$")
_ASSIGNMENT = re.compile(
    r"""^\s*(?:export\s+|set\s+)?["']?([A-Za-z_][A-Za-z0-9_.\-\[\]]*)["']?"""
    r"""\s*(?::|=|:=)\s*(.*?)\s*,?\s*$""")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9+/_\-.~=]{" + str(MIN_SECRET_LEN) + ",}")
_URL_CREDENTIALS = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://([^/@\s:]*)(?::([^/@\s]*))?@")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
_PEM_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----")
_PEM_HEADER_LINE = re.compile(r"^[A-Za-z\-]+:")
_TRIVIAL_WORDS: Final = frozenset({
    "true", "false", "null", "none", "nil", "yes", "no", "on", "off", "localhost", "127.0.0.1",
    "0.0.0.0", "::1", "changeme", "change_me", "password", "example", "development",
    "production", "staging", "test", "testing", "default", "secret", "undefined"})
_DIGITS_ONLY = re.compile(r"^[\d\s.,:+\-/_]+$")
_PATH_LIKE = re.compile(r"^(?:~|\.{1,2})?/[A-Za-z0-9_.\-/ ]*$")
_WORDY = re.compile(r"^[A-Za-z_.\- ]+$")
_HEXISH = re.compile(r"^[0-9a-fA-F\-]+$")
_EMAIL = re.compile(r"^[^@\s:/]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+$")
_HOSTNAME = re.compile(r"^[a-z0-9\-]+(?:\.[a-z0-9\-]+)+(?::\d+)?$")


def _entropy(value: str) -> float:
    counts = Counter(value)
    total = len(value)
    return -sum(c / total * math.log2(c / total) for c in counts.values())


def _is_trivial(value: str) -> bool:
    """Too short, a common word, a number, a path or a URL without credentials."""
    if len(value) < MIN_SECRET_LEN or value.lower() in _TRIVIAL_WORDS:
        return True
    if _DIGITS_ONLY.match(value) or _PATH_LIKE.match(value):
        return True
    if _URL.match(value) and not _URL_CREDENTIALS.match(value):
        return True
    if _EMAIL.match(value) or _HOSTNAME.match(value):
        return True
    return len(set(value)) <= 3


def _looks_random(value: str) -> bool:
    """High entropy: what a key, token or generated password looks like, not prose or names."""
    if _is_trivial(value) or " " in value:  # prose; a passphrase counts by its key's name
        return False
    if _entropy(value) < 3.0:
        return False
    letters = sum(ch.isalpha() for ch in value)
    digits = sum(ch.isdigit() for ch in value)
    if _WORDY.match(value):
        # Letters only: random only when long and of mixed case throughout (not CamelCase words).
        upper = sum(ch.isupper() for ch in value)
        return len(value) >= 16 and 0.25 <= upper / max(letters, 1) <= 0.75
    if _HEXISH.match(value) and len(value) < 20:
        return False
    others = len(value) - letters - digits
    return (letters > 0 and digits > 0) or (others > 0 and letters > 0 and len(value) >= 16)


def _strip_quotes(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        return value[1:-1]
    if value and value[0] in "\"'":
        end = value.find(value[0], 1)
        if end > 0:
            return value[1:end]
    # Unquoted: drop an inline comment.
    for marker in (" #", "\t#", " ;", " //"):
        cut = value.find(marker)
        if cut >= 0:
            value = value[:cut]
    return value.strip()


class _Found(dict[str, None]):
    """The values found so far: stripped, cut to MAX_SECRET_LEN, in order, deduplicated (the
    keys of a dict: an ordered set)."""

    def take(self, value: str) -> None:
        value = value.strip()[:MAX_SECRET_LEN]
        if value:
            self[value] = None


def _pem_block(lines: list[str], i: int) -> tuple[str, int] | None:
    """The body of the PEM block that begins on line ``i`` (its lines joined, header lines
    left out) and the index of the line after the block; None when no block begins there or
    it never ends."""
    line = lines[i]
    begin = _PEM_BEGIN.search(line)
    if begin is None:
        return None
    end_marker = f"-----END {begin.group(1)}-----"
    same_line = line.find(end_marker, begin.end())
    if same_line >= 0:
        # A key inside a JSON string, lines joined by "\n" escapes (service accounts).
        block = line[begin.end():same_line].replace("\\n", "\n").splitlines()
        end_line = i
    else:
        end_line = next((j for j in range(i + 1, len(lines)) if end_marker in lines[j]), -1)
        if end_line < 0:
            return None
        block = lines[i + 1:end_line]
    body = "".join(part.strip() for part in block
                   if part.strip() and not _PEM_HEADER_LINE.match(part.strip()))
    return body, end_line + 1


def _assigned_secrets(name: str, value: str) -> list[str]:
    """The secrets in the assignment of ``value`` to the key ``name``: a URL's password (as
    written and unquoted), or the value itself when it looks random or the name says secret."""
    credentials = _URL_CREDENTIALS.match(value)
    if credentials is not None:
        password = credentials.group(2) or ""
        if len(password) >= MIN_SECRET_LEN and not _is_trivial(password):
            return [unquote(password), password]
        return []
    if _looks_random(value) or (_SECRETISH_KEY.search(name) and not _is_trivial(value)):
        return [value]
    return []


def _take_from_line(found: _Found, line: str) -> None:
    """A line's secrets: an assignment's value, or the whole line when it looks random; then
    the random-looking tokens inside that value or line."""
    stripped = line.strip()
    if not stripped or stripped.startswith(("#", ";", "//", "[")):
        return
    assignment = _ASSIGNMENT.match(stripped)
    if assignment is not None:
        rest = _strip_quotes(assignment.group(2))
        for secret in _assigned_secrets(assignment.group(1), rest):
            found.take(secret)
    else:
        rest = stripped
        if _looks_random(stripped):
            found.take(stripped)
    if rest in found:
        return  # its pieces are found as pieces of it
    for token in _TOKEN_RUN.findall(rest):
        token = token.strip(".~=-")
        if token not in found and not _URL.match(token) and _looks_random(token):
            found.take(token)


def extract_secrets(text: str) -> list[str]:
    """The candidate secret values in the content of a sensitive file, in order, deduplicated.

    PEM blocks give their body joined (without line breaks); ``KEY=VALUE``, ``key: value`` and
    ``"key": "value"`` lines give the value (when it looks random, or when the key's name says
    secret and the value is not trivial; a URL gives its password); other lines give
    themselves when they look random; any long token in a line that looks random is taken too.
    """
    found = _Found()
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        block = _pem_block(lines, i)
        if block is None:
            _take_from_line(found, lines[i])
            i += 1
            continue
        body, i = block
        if len(body) >= MIN_SECRET_LEN:
            found.take(body)
    return list(found)
