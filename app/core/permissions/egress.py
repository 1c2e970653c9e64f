"""Finds secrets in what a tool call is about to send out of the machine.

The flow guard learns the secret material of every sensitive file the conversation has seen
(``SecretMatcher.add_text``), then scans the input of each call that can reach the network
(``SecretMatcher.scan``); a hit denies the call with ``egress_refusal(hits)`` as the reason.

What is found:

- learnt secrets: any piece of at least ``MIN_MATCH_LEN`` characters of a learnt value (so a
  truncated key still matches), or a whole learnt value of ``MIN_SECRET_LEN`` or more; also
  inside percent-encoded text (``%41`` escapes, ``+`` for a space when a learnt value holds
  one), and in base64 (values up to ``BASE64_MAX_SECRET_LEN`` bytes, standard and URL-safe
  alphabets, at each of the three byte alignments, so also when the value sits anywhere inside
  a larger encoded blob);
- well-known token formats, learnt or not: PEM / OpenSSH private key headers (also
  base64-encoded), AWS access key ids and secret access keys next to their name, GitHub, Slack,
  Anthropic, OpenAI, Google API and Stripe live keys, and JSON Web Tokens.

How it stays fast (tests/bench/bench_egress.py: a 100 KB input against 1,000 learnt values
took 2.0-3.0 ms median, best runs 1.7-1.9 ms, on a 2-core machine with another test run busy on
it; 4-8x less than a plain ``secret in text`` loop, which finds far less): every 8-byte window
of each learnt value (and of its base64 forms) is indexed as a 64-bit integer. The input's
UTF-8 bytes are read as consecutive 8-byte integers through one ``memoryview.cast("Q")`` and
intersected with the index's set in C; any common substring of 15 bytes or more contains one
such aligned window. Only a window that hits is verified in Python, by extending the match
around it with slice comparisons. Values of 12 to 14 bytes, which that probe cannot promise to
see, are searched for whole (``bytes.find``, ~25 us each), or, when there are more than
``_FEW_SHORT``, by a second probe at offset 4. Token formats use one regular expression per
literal prefix (a literal prefix is a fast C search; one alternation of them all is ten times
slower), and a plain substring test first where that is cheaper. Escapes are decoded only
around runs of ``%XX``, all regions in one call.

Not found: other encodings (hex, rot13, compression, reversed or split text) and learnt values
shorter than ``MIN_SECRET_LEN``. Matches are exact and case-sensitive.

Bounds: at most ``MAX_SECRETS`` values and ``MAX_INDEX_BYTES`` indexed bytes (base64 forms
included: a 40-byte value indexes ~240; each indexed byte costs ~120 bytes of memory, so ~60 MB
at the bound); beyond either, the oldest values are forgotten, with a warning in the log. A
single value is cut to ``MAX_SECRET_LEN`` characters.

Thread-safe: ``scan`` may run in worker threads while another thread adds secrets.
"""

from __future__ import annotations

import base64
import logging
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

# What a hit is and the token formats (secret_formats), which values of a file are secrets
# (secret_values), hits behind percent-escapes (secret_escapes) and the refusal's wording
# (egress_refusal) live in their own modules; this one learns values and finds them.
from app.core.permissions.egress_refusal import egress_refusal
from app.core.permissions.secret_escapes import escaped_hits
from app.core.permissions.secret_formats import KIND_LABELS, SecretHit, mask, token_hits
from app.core.permissions.secret_values import MAX_SECRET_LEN, MIN_SECRET_LEN, extract_secrets

__all__ = [
    "KIND_LABELS",
    "MAX_INDEX_BYTES",
    "MAX_SECRETS",
    "MIN_MATCH_LEN",
    "MIN_SECRET_LEN",
    "SecretHit",
    "SecretMatcher",
    "egress_refusal",
    "extract_secrets",
    "mask",
]

log = logging.getLogger(__name__)

MIN_MATCH_LEN: Final = 16
"""A piece of a learnt value this long (bytes of UTF-8) counts as the value."""
MAX_SECRETS: Final = 5_000
MAX_INDEX_BYTES: Final = 500_000
BASE64_MAX_SECRET_LEN: Final = 256
"""Only values up to this many bytes are also indexed in base64 (a PEM key's header is found
in base64 regardless)."""

_GRAM: Final = 8  # bytes per indexed window: one unsigned 64-bit integer
_GUARANTEED: Final = 2 * _GRAM - 1  # any common substring this long meets an aligned window
_BYTEORDER: Final = sys.byteorder
_FEW_COMMON: Final = 16  # above this many distinct hit windows, locate them in one pass
_FEW_SHORT: Final = 24  # up to this many short entries, search each (a find costs ~1/24 probe)

# -- learnt values: the index ------------------------------------------------------------------


@dataclass(slots=True)
class _Secret:
    value: str
    source: str
    entry_ids: list[int]
    size: int = 0


@dataclass(frozen=True, slots=True)
class _Entry:
    data: bytes
    secret: _Secret
    encoding: str  # "" or "base64"


def _encode(text: str) -> bytes:
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


class SecretMatcher:
    """The secrets a conversation has seen, and a fast search for them in outgoing text."""

    def __init__(self, *, max_secrets: int = MAX_SECRETS,
                 max_index_bytes: int = MAX_INDEX_BYTES) -> None:
        self._lock = threading.RLock()
        self._max_secrets = max_secrets
        self._max_index_bytes = max_index_bytes
        self._secrets: dict[str, _Secret] = {}  # oldest first
        self._entries: dict[int, _Entry] = {}
        self._short: dict[int, _Entry] = {}  # entries the aligned probe cannot promise to see
        self._index: dict[int, int | tuple[int, ...]] = {}  # window -> entry ids
        self._probe: set[int] = set()  # the index's windows (a set answers ~40% faster)
        self._short_probe: set[int] = set()  # the short entries' windows
        self._index_bytes = 0
        self._next_id = 0
        self._with_space = 0  # values holding a space: decode "+" too

    # -- learning ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._secrets)

    @property
    def index_bytes(self) -> int:
        """Bytes of learnt values and their encodings currently indexed."""
        return self._index_bytes

    def add_text(self, text: str, source: str) -> int:
        """Learn the secret values in the content of a sensitive file.

        Returns how many values were found in ``text`` (already known ones included); they are
        known afterwards unless the bounds forced them out (logged).
        """
        values = extract_secrets(text)
        for value in values:
            self._add(value, source)
        return len(values)

    def add_secret(self, value: str, source: str) -> bool:
        """Learn one value the caller knows is secret. False when it is too short to learn."""
        value = value.strip()[:MAX_SECRET_LEN]
        if len(_encode(value)) < MIN_SECRET_LEN:
            log.debug("not learning a secret of %d characters from %s", len(value), source)
            return False
        self._add(value, source)
        return True

    def clear(self) -> None:
        with self._lock:
            self._secrets.clear()
            self._entries.clear()
            self._short.clear()
            self._index.clear()
            self._probe.clear()
            self._short_probe.clear()
            self._index_bytes = 0
            self._with_space = 0

    def _add(self, value: str, source: str) -> None:
        data = _encode(value)
        if len(data) < MIN_SECRET_LEN:
            return
        forms = [(data, "")]
        if len(data) <= BASE64_MAX_SECRET_LEN:
            forms += [(form, "base64") for form in _base64_forms(data)]
        # Work out the windows outside the lock; only the insertion holds it.
        prepared = [(form, encoding, self._windows(form)) for form, encoding in forms]
        size = sum(len(form) for form, _ in forms)
        with self._lock:
            if value in self._secrets:
                # Known already: refresh it as the newest, keep its first source.
                self._secrets[value] = self._secrets.pop(value)
                return
            secret = _Secret(value, source, [], size)
            for form, encoding, windows in prepared:
                entry_id = self._next_id
                self._next_id += 1
                entry = _Entry(form, secret, encoding)
                self._entries[entry_id] = entry
                secret.entry_ids.append(entry_id)
                if len(form) < _GUARANTEED:
                    self._short[entry_id] = entry
                    self._short_probe |= windows
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
            self._index_bytes += size
            if " " in value:
                self._with_space += 1
            self._evict()

    @staticmethod
    def _windows(data: bytes) -> set[int]:
        return {int.from_bytes(data[i:i + _GRAM], _BYTEORDER)
                for i in range(len(data) - _GRAM + 1)}

    def _evict(self) -> None:
        evicted = 0
        while self._secrets and (len(self._secrets) > self._max_secrets
                                 or self._index_bytes > self._max_index_bytes):
            oldest = next(iter(self._secrets))
            self._forget(self._secrets.pop(oldest))
            evicted += 1
        if evicted:
            log.warning("secret matcher full (%d values, %d bytes indexed): forgot the %d oldest",
                        len(self._secrets), self._index_bytes, evicted)

    def _forget(self, secret: _Secret) -> None:
        for entry_id in secret.entry_ids:
            entry = self._entries.pop(entry_id)
            if self._short.pop(entry_id, None) is not None:
                self._short_probe = set().union(
                    *(self._windows(e.data) for e in self._short.values()))
            for window in self._windows(entry.data):
                held = self._index.get(window)
                if held == entry_id:
                    del self._index[window]
                    self._probe.discard(window)
                elif isinstance(held, tuple):
                    rest = tuple(e for e in held if e != entry_id)
                    self._index[window] = rest[0] if len(rest) == 1 else rest
        self._index_bytes -= secret.size
        if " " in secret.value:
            self._with_space -= 1

    # -- scanning ---------------------------------------------------------------------------

    def scan(self, text: str) -> list[SecretHit]:
        """Every secret in ``text``: learnt values (also escaped or base64-encoded) and
        well-known token formats, ordered by position. Empty when there is none."""
        hits = token_hits(text)
        with self._lock:
            if self._entries:
                hits += self._learnt_hits(text, "")
            with_space = self._with_space > 0
            if "%" in text or (with_space and "+" in text):
                hits += escaped_hits(text, with_space, self._decoded_hits)
        if len(hits) > 1:
            hits = _dedupe(hits)
        return hits

    def first(self, text: str) -> SecretHit | None:
        """The first secret in ``text``, if any."""
        hits = self.scan(text)
        return hits[0] if hits else None

    def _decoded_hits(self, decoded: str) -> list[SecretHit]:
        """Every secret in percent-decoded text (``escaped_hits`` maps them back)."""
        found = token_hits(decoded)
        if self._entries:
            found += self._learnt_hits(decoded, "percent-encoded")
        return found

    def _learnt_hits(self, text: str, encoding: str) -> list[SecretHit]:
        data = _encode(text)
        spans = self._match(data)
        if not spans:
            return []
        ascii_only = len(data) == len(text)
        hits: list[SecretHit] = []
        for start, end, entry in spans:
            if not ascii_only:  # byte offsets to character offsets
                start, end = (len(data[:start].decode("utf-8", "ignore")),
                              len(data[:end].decode("utf-8", "ignore")))
            shown = mask(text[start:end])
            hits.append(SecretHit("learnt", entry.secret.source, shown, start, end,
                                  entry.encoding or encoding))
        return hits

    def _match(self, data: bytes) -> list[tuple[int, int, _Entry]]:
        """Spans of ``data`` (bytes) that are pieces of learnt entries."""
        found: list[tuple[int, int, _Entry]] = []
        self._probe_at(data, 0, self._probe, found)
        if self._short:
            if len(self._short) <= _FEW_SHORT:
                for entry in self._short.values():
                    at = data.find(entry.data)
                    if at >= 0 and not _covered(found, at, at + len(entry.data)):
                        found.append((at, at + len(entry.data), entry))
            else:
                # Windows at 4, 12, 20, ... too: with those at 0, 8, 16, ... any occurrence of
                # 11 bytes or more holds one.
                self._probe_at(data, _GRAM // 2, self._short_probe, found)
        return found

    def _probe_at(self, data: bytes, offset: int, probe: set[int],
                  found: list[tuple[int, int, _Entry]]) -> None:
        usable = (len(data) - offset) // _GRAM * _GRAM
        if usable <= 0 or not probe:
            return
        with memoryview(data) as whole, whole[offset:offset + usable] as part, \
                part.cast("Q") as view:
            # Straight from the view: ~20% faster than through .tolist(). As fast as
            # isdisjoint, and it says which windows hit.
            common = probe.intersection(view)
            if not common:
                return
            if len(common) <= _FEW_COMMON:
                positions = sorted(self._positions(data, common))
            else:
                positions = [offset + i * _GRAM for i, w in enumerate(view.tolist())
                             if w in common]
        self._verify(data, positions, found)

    @staticmethod
    def _positions(data: bytes, common: set[int]) -> list[int]:
        positions: list[int] = []
        for window in common:
            needle = window.to_bytes(_GRAM, _BYTEORDER)
            at = data.find(needle)
            while at >= 0:
                positions.append(at)
                at = data.find(needle, at + 1)
        return positions

    def _verify(self, data: bytes, positions: Iterable[int],
                found: list[tuple[int, int, _Entry]]) -> None:
        """Extend each candidate window (positions ascending) into a match, if it makes one."""
        covered_until = -1  # a window inside the last match is part of it
        for pos in positions:
            if pos + _GRAM <= covered_until:
                continue
            window = data[pos:pos + _GRAM]
            held = self._index.get(int.from_bytes(window, _BYTEORDER))
            if held is None:
                continue
            best: tuple[int, int, _Entry] | None = None
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

def _covered(found: Sequence[tuple[int, int, object]], start: int, end: int) -> bool:
    return any(s <= start and end <= e for s, e, _ in found)


def _dedupe(hits: list[SecretHit]) -> list[SecretHit]:
    """Ordered by position; a hit inside another of the same kind (or the same learnt source)
    is dropped."""
    hits.sort(key=lambda h: (h.start, -(h.end - h.start)))
    kept: list[SecretHit] = []
    reach: dict[tuple[str, str], int] = {}  # furthest end kept so far, per kind and source
    for hit in hits:
        key = (hit.kind, hit.source)
        if hit.end <= reach.get(key, -1):
            continue  # starts no earlier than a kept hit that ends no earlier: inside it
        reach[key] = hit.end
        kept.append(hit)
    return kept
