"""Learnt values too short for the index's aligned probe, and their search.

Part of the egress check's index (app.core.permissions.secret_index): its probe reads the input
as 8-byte windows at offsets 0, 8, 16, ..., and any common substring of 15 bytes or more holds
one of them; a value of 12 to 14 bytes at another alignment holds none. Such values are looked
for whole, the cheapest way for how many there are (tests/bench/bench_egress.py, 100 KB):

- up to ``FEW_FINDS``: ``bytes.find`` each (~26 us a value);
- up to ``UNIT_PATTERN_MAX``: one regular expression over the input read as 2-byte units
  (decoded as UTF-16, one character a unit). Each value gives two alternatives, its units from
  its first byte and from its second, so an occurrence at an even or an odd offset starts a
  match of one of them. ``re`` checks each unit against the set of first units in C and tries
  the alternatives only where one starts: ~160 us for 20 values, ~190 for 50 (beyond ~64, the
  alternatives cost more than the probe below);
- more: a second probe at offsets 4, 12, 20, ..., with the windows read as floats
  (``as_probe_windows``): ~390 us whatever their number.

A byte from 0xD8 to 0xDF at an odd offset would make a surrogate unit, and two of them a single
character, which would shift every unit after them: the input and the values are read with
those bytes folded onto 0xD0-0xD7 first (ASCII input, the common case, holds none and is read as
it is). Folding only adds candidates; each is verified on the original bytes.
"""

from __future__ import annotations

import re
import struct
import sys
from collections.abc import Sequence
from typing import Final, Generic, Literal, Protocol, TypeVar

__all__ = ["FEW_FINDS", "PROBE_AS", "UNIT_PATTERN_MAX", "ShortValues", "covered"]

FEW_FINDS: Final = 4
UNIT_PATTERN_MAX: Final = 64
PROBE_AS: Final[Literal["Q", "d"]] = "d" if sys.byteorder == "little" else "Q"
"""How the second probe reads its windows: as floats where no window of UTF-8 text is a NaN,
which holds in little-endian order only (``as_probe_windows``)."""

_GRAM: Final = 8
_FOLD_SURROGATE_BYTES: Final = bytes.maketrans(bytes(range(0xD8, 0xE0)),
                                               bytes(range(0xD0, 0xD8)))


class _Entry(Protocol):
    """What of an index entry the search needs (app.core.permissions.secret_index)."""

    @property
    def data(self) -> bytes: ...


Entry = TypeVar("Entry", bound=_Entry)


def covered(found: Sequence[tuple[int, int, object]], start: int, end: int) -> bool:
    """Whether a span already found holds ``start:end``."""
    return any(s <= start and end <= e for s, e, _ in found)


def as_probe_windows(windows: set[int]) -> set[int] | set[float]:
    """The windows (8-byte integers in native order) as the second probe reads them: in
    little-endian order, as the floats the same 8 bytes make. A small set of floats is searched
    faster than one of integers: CPython makes a float faster than a 64-bit integer, and an
    integer's hash is its low bits, which for text are its first bytes, so windows of text
    crowd a few slots of the set. No window of UTF-8 text is a NaN (whose hash is not its
    value, so a set would never find it): a NaN's last two bytes are 0xF0 or more, then 0x7F
    or 0xFF, and in UTF-8 0xFF never occurs and 0x7F never follows a lead byte."""
    if PROBE_AS == "Q":
        return set(windows)
    packed = b"".join([window.to_bytes(_GRAM, sys.byteorder) for window in windows])
    return set(struct.unpack(f"<{len(windows)}d", packed))


def _units(data: bytes) -> str:
    """``data`` (all but an odd last byte) as 2-byte units, one character each."""
    if not data.isascii():
        data = data.translate(_FOLD_SURROGATE_BYTES)
    return data[: len(data) // 2 * 2].decode("utf-16-le")


class ShortValues(Generic[Entry]):
    """The short entries of an index, their windows for the second probe, and the unit
    pattern (built on the first search after a change)."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[Entry, set[int]]] = {}  # id -> (entry, windows)
        self.probe: set[int] | set[float] = set()
        """Every short entry's windows, as ``PROBE_AS`` reads them."""
        self._pattern: re.Pattern[str] | None = None
        self._starts: dict[str, list[tuple[Entry, int]]] = {}  # units -> (entry, shift)

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, entry_id: int, entry: Entry, windows: set[int]) -> None:
        self._entries[entry_id] = (entry, windows)
        self.probe |= as_probe_windows(windows)
        self._pattern = None

    def forget(self, entry_id: int) -> None:
        if self._entries.pop(entry_id, None) is not None:
            self.probe = as_probe_windows(
                set().union(*(windows for _, windows in self._entries.values())))
            self._pattern = None

    def clear(self) -> None:
        self._entries.clear()
        self.probe = set()
        self._pattern = None

    @property
    def needs_probe(self) -> bool:
        """Whether there are too many for ``search``: the caller probes ``probe`` instead."""
        return len(self._entries) > UNIT_PATTERN_MAX

    def search(self, data: bytes, found: list[tuple[int, int, Entry]]) -> None:
        """Add to ``found`` where short entries are whole in ``data`` (unless ``needs_probe``:
        then nothing is searched)."""
        if len(self._entries) <= FEW_FINDS:
            for entry, _ in self._entries.values():
                at = data.find(entry.data)
                if at >= 0 and not covered(found, at, at + len(entry.data)):
                    found.append((at, at + len(entry.data), entry))
        elif not self.needs_probe:
            self._search_units(data, found)

    def _search_units(self, data: bytes, found: list[tuple[int, int, Entry]]) -> None:
        pattern = self._pattern or self._compile()
        units = _units(data)
        match = pattern.search(units)
        while match is not None:
            # Every alternative that starts here, not only the one that matched (one may be
            # a prefix of another): the next search starts one unit on, so none is skipped.
            at = match.start()
            for start_units, entries in self._starts.items():
                if units.startswith(start_units, at):
                    for entry, shift in entries:
                        start = 2 * at - shift
                        end = start + len(entry.data)
                        if start >= 0 and data.startswith(entry.data, start) \
                                and not covered(found, start, end):
                            found.append((start, end, entry))
            match = pattern.search(units, at + 1)

    def _compile(self) -> re.Pattern[str]:
        starts: dict[str, list[tuple[Entry, int]]] = {}
        for entry, _ in self._entries.values():
            for shift in (0, 1):
                starts.setdefault(_units(entry.data[shift:]), []).append((entry, shift))
        self._starts = starts
        self._pattern = re.compile("|".join(map(re.escape, starts)))
        return self._pattern
