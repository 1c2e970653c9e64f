"""Well-known secret token formats, and what a found secret looks like (``SecretHit``): the
part of the egress check that needs nothing learnt (app.core.permissions.egress)."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = ["KIND_LABELS", "SecretHit", "mask", "token_hits"]

KIND_LABELS: Final[dict[str, str]] = {
    "learnt": "a learnt secret",
    "private_key": "a private key",
    "aws_access_key_id": "an AWS access key id",
    "aws_secret_access_key": "an AWS secret access key",
    "github_token": "a GitHub token",
    "slack_token": "a Slack token",
    "anthropic_api_key": "an Anthropic API key",
    "openai_api_key": "an OpenAI API key",
    "google_api_key": "a Google API key",
    "stripe_secret_key": "a Stripe live secret key",
    "jwt": "a JSON Web Token",
}


@dataclass(frozen=True, slots=True)
class SecretHit:
    """One secret found in an input.

    ``kind`` is "learnt" or a token kind (a key of ``KIND_LABELS``); ``source`` is where a
    learnt value came from (the file), or the token kind's description; ``masked`` shows a few
    characters at either end only; ``start``/``end`` is the span in the scanned text (for an
    escaped hit, the escaped span that decodes to it); ``encoding`` is "", "base64" or
    "percent-encoded".
    """

    kind: str
    source: str
    masked: str
    start: int
    end: int
    encoding: str = ""


def mask(value: str) -> str:
    """A few characters at either end, never more than a third of ``value``."""
    keep = min(4, len(value) // 6)
    return f"{value[:keep]}…{value[-keep:]}" if keep else "…"


# -- well-known token formats ------------------------------------------------------------------

# One pattern per literal prefix: a literal prefix is a fast C search, an alternation of
# prefixes is not (ten times slower); formats that share a prefix share a pattern (one pass
# over the text each costs ~30 us per 100 KB, tests/bench/bench_egress.py). Each entry: a
# needle that must be in the text before the pattern runs (only where ``needle in text`` is
# cheaper than the pattern's own search: a rare first character makes ``re``'s prefix search
# fast, while ``str.__contains__`` is slower than it for short needles), the pattern, its kind
# (None: the named group that matched), the characters that may not precede a match (checked
# here: a look-behind in front would disable the literal-prefix search).
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_WORDCH = _ALNUM | {"_"}
_TOKENCH = _WORDCH | {"-"}
_TokenPattern = tuple[str, "re.Pattern[str]", "str | None", frozenset[str]]
_TOKEN_PATTERNS: Final[tuple[_TokenPattern, ...]] = (
    ("-----BEGIN", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
     "private_key", frozenset()),
    # "-----BEGIN " in base64 (a whole key file encoded): decoded and checked below.
    ("LS0tLS1CRUdJTi", re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{16,120}"), "private_key",
     _ALNUM),
    ("", re.compile(r"A(?:(?P<aws_access_key_id>(?:KIA|SIA)[A-Z0-9]{16})(?![A-Za-z0-9])"
                    r"|(?P<google_api_key>Iza[0-9A-Za-z_\-]{35})(?![0-9A-Za-z_\-]))"),
     None, _ALNUM),
    ("", re.compile(r"g(?P<github_token>h[pousr]_[A-Za-z0-9]{36,251}(?![A-Za-z0-9_])"
                    r"|ithub_pat_[A-Za-z0-9_]{22,})"), None, _WORDCH),
    ("", re.compile(r"xox[abprs]-[A-Za-z0-9\-]{10,}"), "slack_token", _ALNUM),
    # "sk-" found by its rarer "k-"; the "s" is checked below. (Not one pattern with
    # "k_live_": a match rejected there would hide a key inside it.)
    ("", re.compile(r"k-(?:(?P<anthropic_api_key>ant-[A-Za-z0-9_\-]{20,})"
                    r"|(?P<openai_api_key>(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}"
                    r"|[A-Za-z0-9]{32,}(?![A-Za-z0-9_\-])))"), None, frozenset()),
    ("", re.compile(r"k_live_[0-9A-Za-z]{16,}"), "stripe_secret_key", frozenset()),
    # JWT: header and payload are base64 of '{"...', so both start "eyJ"; found by "yJ".
    ("", re.compile(r"yJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
     "jwt", frozenset()),
    ("", re.compile(r"ccess_?[Kk]ey[\"']?\s*[:=]\s*[\"']?(?P<v>[A-Za-z0-9/+]{40})"
                    r"(?![A-Za-z0-9/+=])"), "aws_secret_access_key", frozenset()),
    ("", re.compile(r"CCESS_?KEY[\"']?\s*[:=]\s*[\"']?(?P<v>[A-Za-z0-9/+]{40})"
                    r"(?![A-Za-z0-9/+=])"), "aws_secret_access_key", frozenset()),
)


def _prefixed(text: str, start: int, prefix: str, not_before: frozenset[str]) -> bool:
    """Whether ``prefix`` ends at ``start`` and is not glued to a word before it."""
    begin = start - len(prefix)
    return (begin >= 0 and text.startswith(prefix, begin)
            and (begin == 0 or text[begin - 1] not in not_before))


# -- per kind: which matches are secrets, and their span -------------------------------------

_SpanCheck = Callable[[str, re.Match[str]], tuple[int, int] | None]


def _after_first_letter(letters: str, not_before: frozenset[str]) -> _SpanCheck:
    """For a pattern found without its first letter (a rarer needle searches faster): the
    match with one of ``letters`` in front, not glued to a word; None without."""
    def check(text: str, m: re.Match[str]) -> tuple[int, int] | None:
        start, end = m.span()
        if any(_prefixed(text, start, letter, not_before) for letter in letters):
            return start - 1, end
        return None
    return check


def _unless_example_key_id(text: str, m: re.Match[str]) -> tuple[int, int] | None:
    # the documentation's example key, AKIAIOSFODNN7EXAMPLE
    return None if m.group().endswith("EXAMPLE") else m.span()


def _secret_access_key_value(text: str, m: re.Match[str]) -> tuple[int, int] | None:
    """The value of an ``aws_secret_access_key = ...`` (any case, with or without "_"), unless
    it is the documentation's example."""
    start = m.start()
    before = text[max(0, start - 9):start].lower().replace("_", "")
    if not before.endswith("secreta") or m.group("v").endswith("EXAMPLEKEY"):
        return None
    return m.span("v")


_SPAN_CHECKS: Final[dict[str, _SpanCheck]] = {
    "aws_access_key_id": _unless_example_key_id,
    "anthropic_api_key": _after_first_letter("s", _TOKENCH),
    "openai_api_key": _after_first_letter("s", _TOKENCH),
    "jwt": _after_first_letter("e", _TOKENCH),
    "stripe_secret_key": _after_first_letter("sr", _ALNUM),
    "aws_secret_access_key": _secret_access_key_value,
}


def _private_key_hit(m: re.Match[str]) -> SecretHit | None:
    """A PEM header is shown as is; base64 of one (a whole key file encoded) is shown decoded,
    when it really is a private key's."""
    value = m.group()
    if not value.startswith("LS0t"):
        return SecretHit("private_key", KIND_LABELS["private_key"], value, *m.span())
    decoded = base64.b64decode(value[: len(value) // 4 * 4])
    if b"PRIVATE KEY" not in decoded:
        return None
    header = decoded.split(b"\n", 1)[0].decode("ascii", "replace")
    return SecretHit("private_key", KIND_LABELS["private_key"], header, *m.span(), "base64")


def _token_hit(kind: str, text: str, m: re.Match[str]) -> SecretHit | None:
    if kind == "private_key":
        return _private_key_hit(m)
    check = _SPAN_CHECKS.get(kind)
    span = m.span() if check is None else check(text, m)
    if span is None:
        return None
    start, end = span
    return SecretHit(kind, KIND_LABELS[kind], mask(text[start:end]), start, end)


def token_hits(text: str) -> list[SecretHit]:
    hits: list[SecretHit] = []
    for needle, pattern, fixed_kind, not_before in _TOKEN_PATTERNS:
        if needle and needle not in text:
            continue
        for m in pattern.finditer(text):
            start = m.start()
            if start and text[start - 1] in not_before:
                continue
            kind = fixed_kind if fixed_kind is not None else m.lastgroup
            if kind is None:  # pragma: no cover - every group-less pattern has a fixed kind
                continue
            hit = _token_hit(kind, text, m)
            if hit is not None:
                hits.append(hit)
    return hits
