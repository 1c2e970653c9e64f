"""Secrets hidden behind percent-encoding (``%41`` escapes, ``+`` for a space) in outgoing text.

Part of the egress check (app.core.permissions.egress), separate from its index of learnt
values because this is a question of text encoding, not of matching: find the runs of escapes,
decode the text around them (all regions in one call), let the caller search the decoded text,
and map each hit back to the span of the original text it came from. Only hits with an escape
inside are reported: the plain scan finds the others.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from typing import Final
from urllib.parse import unquote, unquote_plus

from app.core.permissions.secret_formats import SecretHit

__all__ = ["escaped_hits"]

_ESCAPE_PAD: Final = 64  # characters decoded either side of a run of escapes
# Runs of escapes. Each starts with its literal (a leading group would make the search try
# every position: thirty times slower).
_ESCAPES = re.compile(r"%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2})*")
_ESCAPES_PLUS = re.compile(r"(?:\+|%[0-9A-Fa-f]{2})(?:\+|%[0-9A-Fa-f]{2})*")


def escaped_hits(text: str, with_space: bool,
                 find: Callable[[str], list[SecretHit]]) -> list[SecretHit]:
    """Hits that only show once %XX escapes (and "+" when ``with_space``: a learnt value holds
    a space) decode. ``find`` searches decoded text; its hits' spans are mapped back to
    ``text``."""
    runs = list((_ESCAPES_PLUS if with_space else _ESCAPES).finditer(text))
    if not runs:
        return []
    # Regions: runs of escapes with _ESCAPE_PAD characters either side, merged.
    regions: list[list[int]] = []
    for m in runs:
        start, end = max(0, m.start() - _ESCAPE_PAD), min(len(text), m.end() + _ESCAPE_PAD)
        if regions and start <= regions[-1][1]:
            regions[-1][1] = end
        else:
            regions.append([start, end])
    decode = unquote_plus if with_space else unquote
    # One decode call for all regions (it costs per call more than per escape); "\n"
    # between them decodes to itself, so no match spans two regions' text.
    raws = [text[start:end] for start, end in regions]
    found = find(decode("\n".join(raws)))
    if not found:
        return []
    # Where each region starts in the decoded text (decoded one by one: only on a hit).
    starts: list[int] = []
    at = 0
    for raw in raws:
        starts.append(at)
        at += len(decode(raw)) + 1
    hits: list[SecretHit] = []
    for hit in found:
        region = bisect.bisect_right(starts, hit.start) - 1
        raw_start, raw = regions[region][0], raws[region]
        start, end = _raw_span(raw, with_space, hit.start - starts[region],
                               hit.end - starts[region])
        if decode(raw[start:end]) == raw[start:end]:
            continue  # no escape inside the hit: the plain scan reports it
        hits.append(SecretHit(hit.kind, hit.source, hit.masked, raw_start + start,
                              raw_start + end, hit.encoding or "percent-encoded"))
    return hits


def _raw_span(raw: str, with_space: bool, start: int, end: int) -> tuple[int, int]:
    """The span of ``raw`` whose decoding holds decoded[start:end] (escape runs kept whole)."""
    pattern = _ESCAPES_PLUS if with_space else _ESCAPES
    fn = unquote_plus if with_space else unquote
    raw_at = dec_at = 0
    raw_start = raw_end = -1
    for m in (*pattern.finditer(raw), None):
        literal_end = m.start() if m is not None else len(raw)
        # literal text maps one to one
        literal_len = literal_end - raw_at
        if raw_start < 0 and start < dec_at + literal_len:
            raw_start = raw_at + (start - dec_at)
        if raw_end < 0 and end <= dec_at + literal_len:
            raw_end = raw_at + (end - dec_at)
        raw_at, dec_at = literal_end, dec_at + literal_len
        if m is None:
            break
        run_len = len(fn(m.group()))
        if raw_start < 0 and start < dec_at + run_len:
            raw_start = m.start()
        if raw_end < 0 and end <= dec_at + run_len:
            raw_end = m.end()
        raw_at, dec_at = m.end(), dec_at + run_len
    return max(raw_start, 0), (raw_end if raw_end >= 0 else len(raw))
