"""Secrets hidden behind the usual encodings of outgoing text: hex (also with ``:`` or space
between the bytes), base32, base64 (standard and URL-safe), and zlib, gzip or raw deflate
compression inside base64 or hex; also nested once (base64 of hex, hex of compressed, ...).

Part of the egress check (app.core.permissions.egress), separate from its index of learnt
values because this is a question of encodings, not of matching: find the encoded runs, decode
them (bounded), let the caller search the decoded bytes, and map each hit back to the span of
the input it came from. rot13 and reversed text are not decoded here: the index holds every
learnt value's rot13 and reversed forms, which costs no pass over the input
(app.core.permissions.secret_index).

How it stays fast: one ``bytes.translate`` per alphabet maps the input to a class string ("a"
for a character of the alphabet, " " else), and ``bytes.find`` of a run of "a" finds the long
runs (a regular expression over the characters takes three times as long: it retries inside
every word). All runs of one layer are decoded into one buffer, pieces separated by a NUL byte
(no learnt value and no token format holds one, so no match spans two pieces), searched once.
Runs of one letter case only (hex digits, git SHAs, UUIDs, lower-case URL paths) are not
decoded as base64: the base64 of random bytes holds both cases in 22 characters but for a
chance of 1 in 10^5 (and a run of hex digits is decoded as hex).

Base64 runs are decoded from their first character and after a "/" (a blob in a URL path),
one start per alignment; a blob glued to other base64 characters at another alignment is
found by the index's base64 forms (learnt values up to ``BASE64_MAX_SECRET_LEN`` bytes) but not
decoded. Base32 is decoded from the start of every run of its alphabet in one letter case,
wherever it stands (a class string per case, like the others).

Bounds: at most ``MAX_INFLATED`` bytes out of one compressed stream and ``MAX_INFLATED_TOTAL``
per scan (zip bombs), ``MAX_INFLATE_ATTEMPTS`` streams tried per scan, ``MAX_BASE32_RUN``
characters of one base32 run (decoded in Python); decoding goes ``MAX_DEPTH`` layers deep.
"""

from __future__ import annotations

import binascii
import bisect
import itertools
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from app.core.permissions.secret_formats import SecretHit
from app.core.permissions.secret_index import MIN_MATCH_LEN
from app.core.permissions.secret_values import MIN_SECRET_LEN

__all__ = ["MAX_DEPTH", "MAX_INFLATED", "MAX_INFLATED_TOTAL", "decoded_hits"]

MAX_DEPTH: Final = 2
MAX_INFLATED: Final = 256 * 1024
MAX_INFLATED_TOTAL: Final = 4 * 1024 * 1024
MAX_INFLATE_ATTEMPTS: Final = 2_000
MAX_BASE32_RUN: Final = 64 * 1024

# The shortest runs worth decoding: what MIN_SECRET_LEN bytes encode to.
_MIN_HEX_RUN: Final = 2 * MIN_SECRET_LEN
_MIN_HEX_PAIRS: Final = MIN_SECRET_LEN
_MIN_BASE32_RUN: Final = -(-MIN_SECRET_LEN * 8 // 5)
_MIN_BASE64_RUN: Final = -(-MIN_MATCH_LEN * 4 // 3)
# (base64 of a whole short value is found by the index's base64 forms: decoding serves longer
# values, compression, nesting and token formats, all longer than MIN_MATCH_LEN bytes)

_B64_ALPHABET: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"
_HEX_DIGITS: Final = b"0123456789abcdefABCDEF"
_B32_UPPER: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def _class_table(alphabet: bytes, separators: bytes = b"") -> bytes:
    return bytes(0x61 if b in alphabet else 0x3A if b in separators else 0x20
                 for b in range(256))


_B64_CLASS: Final = _class_table(_B64_ALPHABET)
_SEPARATED_HEX_CLASS: Final = _class_table(_HEX_DIGITS, b": ")  # ":" for a separator
_URLSAFE_TO_STANDARD: Final = bytes.maketrans(b"-_", b"+/")
_B32_UPPER_CLASS: Final = _class_table(_B32_UPPER)
_B32_LOWER_CLASS: Final = _class_table(_B32_UPPER.lower())
_SEPARATED_PAIRS = re.compile(rb"(?:aa:)+aa")
_SEPARATED_NEEDLE: Final = b"aa:" * (_MIN_HEX_PAIRS - 1) + b"aa"
_GZIP_MAGIC: Final = b"\x1f\x8b\x08"
_STREAM_START_CLASS: Final = bytes(  # "a": a zlib header's, gzip's or a final/stored block's
    0x61 if b & 0x0F == 8 or b == _GZIP_MAGIC[0] or b & 7 in (1, 3, 5) else 0x20
    for b in range(256))
_BASE32_LENGTHS: Final = frozenset({0, 2, 4, 5, 7})  # valid unpadded lengths mod 8

Find = Callable[[bytes, bool], list[SecretHit]]
"""Searches decoded bytes for learnt values (False) or token formats (True); its hits' spans
are byte offsets into them."""


@dataclass(slots=True)
class _Budget:
    """What one scan may still spend on decompression."""

    attempts: int = MAX_INFLATE_ATTEMPTS
    inflated: int = MAX_INFLATED_TOTAL


@dataclass(slots=True)
class _Layer:
    """The decoded pieces of one layer, joined into one buffer (NUL between pieces)."""

    parts: list[bytes] = field(default_factory=list)
    spans: list[tuple[int, int, int, int, str]] = field(default_factory=list)
    """(start, end, chars, bytes, encoding) per piece: the encoded span of the layer's input,
    and how many of its characters make how many decoded bytes (chars 0: not linear, map to
    all of it)."""

    def add(self, decoded: bytes, start: int, end: int, chars: int, per: int,
            encoding: str) -> None:
        self.parts.append(decoded)
        self.spans.append((start, end, chars, per, encoding))

    def mapper(self, parts: list[int]) -> Callable[[SecretHit], SecretHit]:
        """Maps a hit in the buffer of ``parts`` (indexes, joined by NUL) to the input."""
        starts: list[int] = []  # where each part starts in the buffer: on the first hit

        def mapped(hit: SecretHit) -> SecretHit:
            if not starts:
                starts.extend(itertools.accumulate(
                    [len(self.parts[index]) + 1 for index in parts[:-1]], initial=0))
            which = bisect.bisect_right(starts, hit.start) - 1
            at = starts[which]
            start, end, chars, per, encoding = self.spans[parts[which]]
            if chars:
                start, end = (start + (hit.start - at) * chars // per,
                              min(end, start + -(-(hit.end - at) * chars // per)))
            inner = hit.encoding
            return SecretHit(hit.kind, hit.source, hit.masked, start, end,
                             f"{inner}, then {encoding}" if inner else encoding)
        return mapped


def decoded_hits(data: bytes, find: Find, depth: int = MAX_DEPTH) -> list[SecretHit]:
    """Hits in what the encoded runs of ``data`` decode to, with spans (byte offsets) in
    ``data`` and the encodings named, innermost first ("hex-encoded, then base64")."""
    return _hits(data, find, depth, _Budget())


def _hits(data: bytes, find: Find, depth: int, budget: _Budget) -> list[SecretHit]:
    layer = _Layer()
    _hex_runs(data, layer)
    _base64_and_base32_runs(data, layer)
    if not layer.parts:
        return []
    _inflate_pieces(layer, budget)
    everything = [i for i, part in enumerate(layer.parts) if len(part) >= MIN_SECRET_LEN]
    # Token formats and further encodings are text: only pieces that decoded to ASCII (random
    # bytes decoded from an ordinary word rarely are) are searched for them.
    text = [i for i in everything if layer.parts[i].isascii()]
    found = [*map(layer.mapper(everything),
                  find(b"\0".join([layer.parts[i] for i in everything]), False))]
    if text:
        buffer = b"\0".join([layer.parts[i] for i in text])
        inner = find(buffer, True)
        if depth > 1:
            inner += _hits(buffer, find, depth - 1, budget)
        found += map(layer.mapper(text), inner)
    return found


def _runs(classes: bytes, length: int, separators: bool = False) -> list[tuple[int, int]]:
    """Spans of the runs of "a" at least ``length`` long in ``classes`` (of "a" and " ", and
    ":" when ``separators``)."""
    runs: list[tuple[int, int]] = []
    needle = b"a" * length
    find = classes.find
    at = find(needle)
    while at >= 0:
        end = find(b" ", at + length)
        if end < 0:
            end = len(classes)
        if separators:
            colon = find(b":", at + length, end)
            if colon >= 0:
                end = colon
        runs.append((at, end))
        at = find(needle, end)
    return runs


def _hex_runs(data: bytes, layer: _Layer) -> None:
    # One class string serves both plain runs and runs of pairs with separators between.
    classes = data.translate(_SEPARATED_HEX_CLASS)
    runs = _runs(classes, _MIN_HEX_RUN, separators=True)
    if runs:
        # Whole pairs from the start, and from the second digit of an odd run (a stray digit
        # in front?): all decoded in one call.
        spans = [(start, start + (end - start) // 2 * 2) for start, end in runs]
        spans += [(start + 1, end) for start, end in runs if (end - start) % 2]
        decoded = binascii.unhexlify(b"".join([data[start:end] for start, end in spans]))
        offsets = list(itertools.accumulate([(end - start) // 2 for start, end in spans],
                                            initial=0))
        layer.parts += [decoded[a:b] for a, b in itertools.pairwise(offsets)]
        layer.spans += [(start, end, 2, 1, "hex-encoded") for start, end in spans]
    at = classes.find(_SEPARATED_NEEDLE)
    while at >= 0:
        match = _SEPARATED_PAIRS.match(classes, at)
        assert match is not None  # the needle is such a run
        end = match.end()
        digits = data[at:end].translate(None, b": ")
        layer.add(binascii.unhexlify(digits), at, end, 0, 1, "hex-encoded")
        at = classes.find(_SEPARATED_NEEDLE, end)


def _base64_and_base32_runs(data: bytes, layer: _Layer) -> None:
    _base32_runs(data, layer)
    classes = data.translate(_B64_CLASS)
    blobs: list[bytes] = []  # standard alphabet, whole quads: decoded in one call
    spans: list[tuple[int, int]] = []
    for start, end in _runs(classes, _MIN_BASE64_RUN):
        run = data[start:end]
        if _one_case(run) or run.upper() == run:
            # One letter case (hex, a UUID, a path, base32; not base64, see above), or no
            # letter at all. The slice's own case tests cost less than a class string of the
            # whole input and two searches of it per run: most runs are one-case.
            continue
        # Where a blob may start: the run's start, and after a "/" (a blob in a URL path).
        starts = [0]
        slash = run.find(b"/")
        while 0 <= slash < len(run) - _MIN_BASE64_RUN and len(starts) < 4:
            starts.append(slash + 1)
            slash = run.find(b"/", slash + 1)
        if len(starts) > 1:
            starts = [at for at in starts if not _one_case(run[at:])]
        standard = run.translate(_URLSAFE_TO_STANDARD)
        for at in starts:  # (each start: a compressed stream must start its piece)
            blob = standard[at:]
            usable = len(blob) - (len(blob) % 4 == 1)
            if usable % 4:
                # zero bits ("=" would end the decoding of the joined blobs)
                blobs.append(blob[:usable] + b"A" * (4 - usable % 4))
            else:
                blobs.append(blob[:usable])
            spans.append((start + at, start + at + usable))
    if blobs:
        decoded = binascii.a2b_base64(b"".join(blobs))
        at = 0
        for blob, (start, end) in zip(blobs, spans, strict=True):
            size = len(blob) // 4 * 3
            layer.add(decoded[at:at + size], start, end, 4, 3, "base64")
            at += size


def _base32_runs(data: bytes, layer: _Layer) -> None:
    """Every run of base32 characters of one letter case (the alphabet's upper or lower
    case) long enough for a value, from its start: found by ``bytes.find`` in one class string
    per case, so ordinary text costs no Python per word."""
    for table in (_B32_UPPER_CLASS, _B32_LOWER_CLASS):
        classes = data.translate(table)
        for start, end in _runs(classes, _MIN_BASE32_RUN):
            _base32(data[start:end], start, layer)


def _one_case(text: bytes) -> bool:
    return text.isupper() or text.islower()


def _base32(run: bytes, start: int, layer: _Layer) -> None:
    run = run[:MAX_BASE32_RUN]
    usable = len(run)
    while usable % 8 not in _BASE32_LENGTHS:
        usable -= 1
    layer.add(_b32decode(run[:usable]), start, start + usable, 8, 5, "base32-encoded")


# Base32's alphabet as the digits of Python's base-32 integers (0-9, a-v), either case: the
# standard library decodes base32 in Python, a character at a time; int() does it in C.
_B32_AS_DIGITS: Final = bytes.maketrans(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567abcdefghijklmnopqrstuvwxyz",
    b"0123456789abcdefghijklmnopqrstuv0123456789abcdefghijklmnop")


def _b32decode(run: bytes) -> bytes:
    """The bytes an unpadded run of base32 characters (a valid length) stands for."""
    bits = 5 * len(run)
    size = bits // 8
    value = int(run.translate(_B32_AS_DIGITS), 32) >> (bits - 8 * size)
    return value.to_bytes(size, "big")


def _inflate_pieces(layer: _Layer, budget: _Budget) -> None:
    """Add what compressed pieces (zlib, gzip or raw deflate at a piece's start) inflate to."""
    # The pieces whose first byte may start a stream (~45% of random ones), found in C.
    maybe = bytes([piece[0] for piece in layer.parts]).translate(_STREAM_START_CLASS)
    next_index = maybe.find(b"a")
    while next_index >= 0:
        index, next_index = next_index, maybe.find(b"a", next_index + 1)
        piece = layer.parts[index]
        first = piece[0]
        if first & 0x0F == 8 and (first << 8 | piece[1]) % 31 == 0:
            wbits, name = 15, "zlib-compressed"
        elif piece.startswith(_GZIP_MAGIC):
            wbits, name = 31, "gzip-compressed"
        elif first & 7 in (3, 5) or (first & 7 == 1 and _stored_block(piece)):
            wbits, name = -15, "deflate-compressed"  # a final fixed, dynamic or stored block
        else:
            continue
        if budget.attempts <= 0 or budget.inflated <= 0:
            return
        budget.attempts -= 1
        inflated = _inflate(piece, wbits, min(MAX_INFLATED, budget.inflated))
        if inflated:
            budget.inflated -= len(inflated)
            start, end, _, _, encoding = layer.spans[index]
            layer.add(inflated, start, end, 0, 1, f"{name}, then {encoding}")


def _stored_block(piece: bytes) -> bool:
    return len(piece) >= 5 and piece[1] | piece[2] << 8 == (piece[3] | piece[4] << 8) ^ 0xFFFF


def _inflate(data: bytes, wbits: int, limit: int) -> bytes:
    """What ``data`` inflates to, at most ``limit`` bytes; what came out before an error
    (a stream cut short still shows its start)."""
    inflater = zlib.decompressobj(wbits)
    try:
        return inflater.decompress(data, limit)
    except zlib.error:
        return b""
