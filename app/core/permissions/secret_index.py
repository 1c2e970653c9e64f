"""The index of learnt secret values, and the search of outgoing bytes for pieces of them.

Part of the egress check (app.core.permissions.egress, whose docstring says what is found and
how fast): that module decides what to learn and turns matches into hits; this one holds the
learnt values and finds them. Every 8-byte window of each learnt value (and of its base64,
rot13 and reversed forms) is indexed as a 64-bit integer; ``SecretIndex.match`` reads the
input as consecutive 8-byte integers, intersects them with the index's set in C, and verifies
only the windows that hit, by extending the match around them with slice comparisons.

Not thread-safe: ``SecretMatcher`` serialises access to it (``prepare`` alone needs no lock).
"""

from __future__ import annotations

import base64
import logging
import struct
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from app.core.permissions.secret_short import PROBE_AS, ShortValues
from app.core.permissions.secret_values import MIN_SECRET_LEN

log = logging.getLogger(__name__)

MIN_MATCH_LEN: Final = 16
"""A piece of a learnt value this long (bytes of UTF-8) counts as the value."""
MAX_SECRETS: Final = 5_000
MAX_INDEX_BYTES: Final = 650_000
BASE64_MAX_SECRET_LEN: Final = 256
"""Only values up to this many bytes are also indexed in base64 (a PEM key's header is found
in base64 regardless)."""
TRANSFORMED_MAX_SECRET_LEN: Final = 1024
"""Only values of 15 bytes up to this many are also indexed rot13'd and reversed (cheaper than
transforming every input: no pass over it, ~2 x 50 more indexed bytes for a typical value)."""
_ROT13: Final = bytes.maketrans(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    b"NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm")

_GRAM: Final = 8  # bytes per indexed window: one unsigned 64-bit integer
_GUARANTEED: Final = 2 * _GRAM - 1  # any common substring this long meets an aligned window
_BYTEORDER: Final = sys.byteorder
_FEW_COMMON: Final = 16  # above this many distinct hit windows, locate them in one pass


@dataclass(slots=True)
class LearntSecret:
    value: str
    source: str
    entry_ids: list[int]
    size: int = 0


@dataclass(frozen=True, slots=True)
class IndexEntry:
    data: bytes
    secret: LearntSecret
    encoding: str  # "", "base64", "rot13" or "reversed"


Span = tuple[int, int, IndexEntry]
"""Where a piece of a learnt entry is in the searched bytes: (start, end, entry)."""


@dataclass(frozen=True, slots=True)
class PreparedSecret:
    """A value's indexed forms and their windows, worked out before taking the lock."""

    value: str
    source: str
    forms: list[tuple[bytes, str, set[int]]]  # (form, encoding, windows)
    size: int


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _base64_forms(data: bytes) -> list[bytes]:
    """What ``data`` looks like inside any base64 blob: one form per byte alignment, cut to
    the characters that depend on ``data`` alone, in the standard and the URL-safe alphabet."""
    forms: list[bytes] = []
    for skip in range(3):
        part = data[skip:]
        if not part:
            break
        determined = 4 * (len(part) // 3) + len(part) % 3
        encoded = base64.b64encode(part)[:determined]
        if len(encoded) < MIN_MATCH_LEN:
            continue
        forms.append(encoded)
        urlsafe = encoded.translate(bytes.maketrans(b"+/", b"-_"))
        if urlsafe != encoded:
            forms.append(urlsafe)
    return forms


def _windows(data: bytes) -> set[int]:
    return {int.from_bytes(data[i:i + _GRAM], _BYTEORDER)
            for i in range(len(data) - _GRAM + 1)}


def _positions(view: memoryview[int] | memoryview[float], offset: int, data: bytes,
               common: set[int] | set[float]) -> list[int]:
    """Where the windows of ``common`` (read from ``view``: ``data`` from ``offset``, in
    8-byte windows) are in ``data``. A window's aligned neighbours that are in ``common`` too
    are taken with it: the windows of one match lie side by side, and a find of each would
    cost a pass over ``data`` (~26 us per 100 KB). A neighbour's other places may go
    unreported, never a value: every window keeps a place, and a hit refuses the call."""
    positions: list[int] = []
    left = set(common)
    slots = len(view)
    while left:
        window = left.pop()
        needle = (struct.pack("<d", window) if isinstance(window, float)
                  else window.to_bytes(_GRAM, _BYTEORDER))
        at = data.find(needle)
        while at >= 0:
            positions.append(at)
            slot, misaligned = divmod(at - offset, _GRAM)
            if not misaligned and 0 <= slot < slots:
                for step in (1, -1):
                    near = slot + step
                    while 0 <= near < slots and view[near] in left:
                        left.discard(view[near])
                        positions.append(offset + near * _GRAM)
                        near += step
            at = data.find(needle, at + 1)
    return positions


def _common_prefix(a: bytes, ai: int, b: bytes, bi: int) -> int:
    """How many bytes a[ai:] and b[bi:] have in common at their start (binary search)."""
    lo, hi = 0, min(len(a) - ai, len(b) - bi)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[ai:ai + mid] == b[bi:bi + mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: bytes, ai: int, b: bytes, bi: int) -> int:
    """How many bytes a[:ai] and b[:bi] have in common at their end."""
    lo, hi = 0, min(ai, bi)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[ai - mid:ai] == b[bi - mid:bi]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class SecretIndex:
    """Learnt values (oldest first, bounded) and their windows."""

    def __init__(self, max_secrets: int, max_index_bytes: int) -> None:
        self._max_secrets = max_secrets
        self._max_index_bytes = max_index_bytes
        self._secrets: dict[str, LearntSecret] = {}  # oldest first
        self._entries: dict[int, IndexEntry] = {}
        self._short: ShortValues[IndexEntry] = ShortValues()  # the aligned probe may miss
        self._index: dict[int, int | tuple[int, ...]] = {}  # window -> entry ids
        self._probe: set[int] = set()  # the index's windows (a set answers ~40% faster)
        self.index_bytes = 0
        """Bytes of learnt values and their encodings currently indexed."""
        self._next_id = 0
        self.with_space = 0
        """How many learnt values hold a space (then a "+" in the input may stand for one)."""

    def __len__(self) -> int:
        return len(self._secrets)

    @staticmethod
    def prepare(value: str, source: str) -> PreparedSecret | None:
        """The forms of ``value`` to index (None when it is too short to learn)."""
        data = encode(value)
        if len(data) < MIN_SECRET_LEN:
            return None
        forms = [(data, "")]
        if len(data) <= BASE64_MAX_SECRET_LEN:
            forms += [(form, "base64") for form in _base64_forms(data)]
        if _GUARANTEED <= len(data) <= TRANSFORMED_MAX_SECRET_LEN:
            # (not values of 12-14 bytes: each short form costs a search of its own)
            # Reversed as characters, so a reversed non-ASCII value is found too.
            for form, encoding in ((data.translate(_ROT13), "rot13"),
                                   (encode(value[::-1]), "reversed")):
                if form != data:
                    forms.append((form, encoding))
        return PreparedSecret(value, source,
                              [(form, encoding, _windows(form)) for form, encoding in forms],
                              sum(len(form) for form, _ in forms))

    def add(self, prepared: PreparedSecret) -> None:
        """Index a prepared value (a known one is refreshed as the newest, keeping its first
        source), then forget the oldest values beyond the bounds."""
        value = prepared.value
        if value in self._secrets:
            self._secrets[value] = self._secrets.pop(value)
            return
        secret = LearntSecret(value, prepared.source, [], prepared.size)
        for form, encoding, windows in prepared.forms:
            entry_id = self._next_id
            self._next_id += 1
            entry = IndexEntry(form, secret, encoding)
            self._entries[entry_id] = entry
            secret.entry_ids.append(entry_id)
            if len(form) < _GUARANTEED:
                self._short.add(entry_id, entry, windows)
            index = self._index
            self._probe |= windows
            for window in windows:
                held = index.get(window)
                if held is None:
                    index[window] = entry_id
                elif isinstance(held, int):
                    if held != entry_id:
                        index[window] = (held, entry_id)
                elif entry_id not in held:
                    index[window] = (*held, entry_id)
        self._secrets[value] = secret
        self.index_bytes += prepared.size
        if " " in value:
            self.with_space += 1
        self._evict()

    def clear(self) -> None:
        self._secrets.clear()
        self._entries.clear()
        self._short.clear()
        self._index.clear()
        self._probe.clear()
        self.index_bytes = 0
        self.with_space = 0

    def _evict(self) -> None:
        evicted = 0
        while self._secrets and (len(self._secrets) > self._max_secrets
                                 or self.index_bytes > self._max_index_bytes):
            oldest = next(iter(self._secrets))
            self._forget(self._secrets.pop(oldest))
            evicted += 1
        if evicted:
            log.warning("secret matcher full (%d values, %d bytes indexed): forgot the %d oldest",
                        len(self._secrets), self.index_bytes, evicted)

    def _forget(self, secret: LearntSecret) -> None:
        for entry_id in secret.entry_ids:
            entry = self._entries.pop(entry_id)
            self._short.forget(entry_id)
            for window in _windows(entry.data):
                held = self._index.get(window)
                if held == entry_id:
                    del self._index[window]
                    self._probe.discard(window)
                elif isinstance(held, tuple):
                    rest = tuple(e for e in held if e != entry_id)
                    self._index[window] = rest[0] if len(rest) == 1 else rest
        self.index_bytes -= secret.size
        if " " in secret.value:
            self.with_space -= 1

    # -- searching --------------------------------------------------------------------------

    def match(self, data: bytes) -> list[Span]:
        """Spans of ``data`` (bytes) that are pieces of learnt entries."""
        found: list[Span] = []
        self._probe_at(data, 0, self._probe, found)
        if self._short.needs_probe:
            # Windows at 4, 12, 20, ... too: with those at 0, 8, 16, ... any occurrence of
            # 11 bytes or more holds one.
            self._probe_at(data, _GRAM // 2, self._short.probe, found, PROBE_AS)
        elif self._short:
            self._short.search(data, found)
        return found

    def _probe_at(self, data: bytes, offset: int, probe: set[int] | set[float],
                  found: list[Span], as_type: Literal["Q", "d"] = "Q") -> None:
        """Verify the windows at ``offset``, ``offset + 8``, ... that are in ``probe`` (the
        windows read as ``as_type``: "Q" integers or "d" floats, see
        app.core.permissions.secret_short)."""
        usable = (len(data) - offset) // _GRAM * _GRAM
        if usable <= 0 or not probe:
            return
        with memoryview(data) as whole, whole[offset:offset + usable] as part, \
                part.cast(as_type) as view:
            # Straight from the view: ~20% faster than through .tolist(). As fast as
            # isdisjoint, and it says which windows hit.
            common = probe.intersection(view)
            if not common:
                return
            if len(common) <= _FEW_COMMON:
                positions = sorted(_positions(view, offset, data, common))
            else:
                positions = [offset + i * _GRAM for i, w in enumerate(view.tolist())
                             if w in common]
        self._verify(data, positions, found)

    def _verify(self, data: bytes, positions: Iterable[int], found: list[Span]) -> None:
        """Extend each candidate window (positions ascending) into a match, if it makes one."""
        covered_until = -1  # a window inside the last match is part of it
        for pos in positions:
            if pos + _GRAM <= covered_until:
                continue
            window = data[pos:pos + _GRAM]
            held = self._index.get(int.from_bytes(window, _BYTEORDER))
            if held is None:
                continue
            best: Span | None = None
            for entry_id in (held,) if isinstance(held, int) else held:
                entry = self._entries[entry_id]
                where = entry.data.find(window)
                while where >= 0:
                    left = _common_suffix(data, pos, entry.data, where)
                    right = _common_prefix(data, pos + _GRAM, entry.data, where + _GRAM)
                    length = left + _GRAM + right
                    whole = length == len(entry.data)
                    if (length >= MIN_MATCH_LEN or whole) and (
                            best is None or length > best[1] - best[0]):
                        best = (pos - left, pos + _GRAM + right, entry)
                    where = entry.data.find(window, where + 1)
            if best is not None:
                found.append(best)
                covered_until = best[1]
