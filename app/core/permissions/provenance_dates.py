"""Dates as values, for ``app.core.permissions.provenance``: a date an injected text chose
("book it again from the first to the thirtieth of June") reaches a third-party tool as
"2024-06-01", written by the model; as words it matches nothing. Every date is therefore
reduced to one spelling-free key, its month and day (``DATE_PREFIX`` + "06-01"): the year is
left out, since people rarely write it and the model fills it in.

Read generously, in what is learnt (results and the person's words alike): every day next to
a month name (within ``_NEAR`` characters, so "May 20 to 23" and "the first to the thirtieth
of June" give both days), in digits or ordinal words, and ISO dates. In an argument only what
is surely one date is read: an ISO date (with or without a time), or a month name with a
day. A day written as digits only ("01/06/2024") is read both ways (day/month and
month/day). Weekdays and relative dates ("tomorrow", "Friday") are not dates here: the model
computes those itself for the person's own bookings too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["DATE_PREFIX", "argument_dates", "text_dates"]

DATE_PREFIX = "date:"
_NEAR = 40  # characters on either side of a month name where its days are looked for

_MONTHS = {name: n for n, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec")), start=1) for name in names}
_MONTH = re.compile(r"\b(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b\.?")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
             "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth",
             "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth")
_DAY_WORDS = {word: n for n, word in enumerate(_ORDINALS, start=1)}
_DAY_WORDS.update({f"twenty{sep}{word}": 20 + n for n, word in enumerate(_ORDINALS[:9], 1)
                   for sep in (" ", "-", "")})
_DAY_WORDS.update({"thirtieth": 30, "thirty first": 31, "thirty-first": 31,
                   "thirtyfirst": 31})
_DAY = re.compile(r"(?<![\w:.,/-])(\d{1,2})(?:st|nd|rd|th)?(?![\w:]|[.,/-]\d)|\b(" +
                  "|".join(sorted((re.escape(w) for w in _DAY_WORDS), key=len, reverse=True))
                  + r")\b")
_ISO = re.compile(r"(?<!\d)\d{4}-(\d{1,2})-(\d{1,2})(?!\d)")
_NUMERIC = re.compile(r"(?<![\d/.])(\d{1,2})[./](\d{1,2})[./](?:\d{4}|\d{2})(?![\d/.])")
_MONTH_DAY = re.compile(_MONTH.pattern + r"\s*(\d{1,2})(?:st|nd|rd|th)?\b")
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+" + _MONTH.pattern)


def _key(month: int, day: int) -> str | None:
    if 1 <= month <= 12 and 1 <= day <= 31:
        return f"{DATE_PREFIX}{month:02d}-{day:02d}"
    return None


def _day(match: re.Match[str]) -> int:
    digits, word = match.groups()
    return int(digits) if digits is not None else _DAY_WORDS[word.lower()]


def _exact(text: str) -> Iterator[str]:
    """Dates written so that they are one date: ISO, and digits with "/" or "." (both
    orders)."""
    for match in _ISO.finditer(text):
        key = _key(int(match.group(1)), int(match.group(2)))
        if key is not None:
            yield key
    for match in _NUMERIC.finditer(text):
        first, second = int(match.group(1)), int(match.group(2))
        for month, day in ((first, second), (second, first)):
            key = _key(month, day)
            if key is not None:
                yield key


def text_dates(text: str) -> set[str]:
    """Every date ``text`` may name, generously (module docstring)."""
    lowered = text.lower()
    found = set(_exact(lowered))
    for month_match in _MONTH.finditer(lowered):
        name = month_match.group(1)
        if name == "may" and (text[month_match.start()] != "M"
                              or not _near_day(lowered, month_match)):
            continue  # the verb ("you may want 3 rooms")
        month = _MONTHS[name]
        start, end = month_match.span()
        window = lowered[max(0, start - _NEAR):end + _NEAR]
        for day_match in _DAY.finditer(window):
            key = _key(month, _day(day_match))
            if key is not None:
                found.add(key)
    return found


def _near_day(text: str, month: re.Match[str]) -> bool:
    start, end = month.span()
    return _DAY.search(text[max(0, start - 12):end + 12]) is not None


def argument_dates(text: str) -> Iterator[str]:
    """The dates one argument of a call surely names (module docstring)."""
    lowered = text.lower()
    yield from _exact(lowered)
    for match in _MONTH_DAY.finditer(lowered):
        key = _key(_MONTHS[match.group(1)], int(match.group(2)))
        if key is not None:
            yield key
    for match in _DAY_MONTH.finditer(lowered):
        key = _key(_MONTHS[match.group(2)], int(match.group(1)))
        if key is not None:
            yield key
