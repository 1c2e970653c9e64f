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
  a larger encoded blob); rot13'd or reversed (values of 15 bytes up to
  ``TRANSFORMED_MAX_SECRET_LEN``: these forms are indexed too); behind hex (either case, also
  with ":" or spaces between bytes), base32 (either case, padded or not), base64 of any length,
  zlib, gzip or raw deflate inside base64 or hex, and one such encoding inside another (base64
  of hex, hex in zlib in base64...): decoded runs, bounded (app.core.permissions.
  secret_decodings); the hit's ``encoding`` names them, innermost first;
- split over several calls to one destination: the flow state's ``EgressHistory``
  (app.core.permissions.egress_history) joins what went there before with each new call;
- well-known token formats, learnt or not: PEM / OpenSSH private key headers (also
  base64-encoded), AWS access key ids and secret access keys next to their name, GitHub, Slack,
  Anthropic, OpenAI, Google API and Stripe live keys, and JSON Web Tokens.

How it stays fast (tests/bench/bench_egress.py, whose docstring has today's numbers and where
the time goes: a 100 KB input against 1,000 learnt values, decoding included, ~2.8 ms median
on the 2-core machine; ~4x less than a plain ``secret in text`` loop, which finds far less,
and the short values cost ~0.18 ms of it): every 8-byte window
of each learnt value (and of its base64 forms) is indexed as a 64-bit integer. The input's
UTF-8 bytes are read as consecutive 8-byte integers through one ``memoryview.cast("Q")`` and
intersected with the index's set in C; any common substring of 15 bytes or more contains one
such aligned window. Only a window that hits is verified in Python, by extending the match
around it with slice comparisons. Values of 12 to 14 bytes, which that probe cannot promise to
see, are searched for whole: one ``bytes.find`` each when there are few, one regular
expression over the input read as 2-byte units up to 64, a second probe at offset 4 beyond
(app.core.permissions.secret_short; the index: app.core.permissions.secret_index). Token
formats use one regular expression per literal prefix (a literal prefix is a fast C search;
one alternation of them all is ten times slower), and a plain substring test first where that
is cheaper. Escapes are decoded only around runs of ``%XX``, all regions in one call.

Decoding costs ~1.2 ms of the 100 KB (same bench; ~1.6 ms in all with nothing learnt, token
formats and escapes included). Ordinary text holds ~700 runs worth a look (UUIDs, git SHAs,
URL paths, identifiers) and each costs a few Python steps; the rot13 and reversed forms cost
nothing measurable.

Not found: a base64 or base32 blob glued to other characters of its alphabet at another
alignment (``x`` + blob; after "/" and at a run's start it is decoded), a value that compresses
to less than ~22 base64 characters, rot13'd or reversed values of 12-14 bytes and token formats
rot13'd or reversed, other encodings (XOR, characters interleaved, decimal...), and learnt
values shorter than ``MIN_SECRET_LEN``. Matches are exact and case-sensitive.

Bounds: at most ``MAX_SECRETS`` values and ``MAX_INDEX_BYTES`` indexed bytes (base64, rot13 and
reversed forms included: a 40-byte value indexes ~320; each indexed byte costs ~96 bytes of
memory (tracemalloc, in the bench), so ~60 MB at the bound); beyond either, the oldest values
are forgotten, with a warning in the log. A single value is cut to ``MAX_SECRET_LEN``
characters.

Thread-safe: ``scan`` may run in worker threads while another thread adds secrets.
"""

from __future__ import annotations

import logging
import threading

# What a hit is and the token formats (secret_formats), which values of a file are secrets
# (secret_values), the index of learnt values and its search (secret_index), hits behind
# percent-escapes (secret_escapes) and the refusal's wording (egress_refusal) live in their own
# modules; this one decides what to learn and turns what is found into ordered hits.
from app.core.permissions.egress_refusal import egress_refusal
from app.core.permissions.secret_decodings import decoded_hits
from app.core.permissions.secret_escapes import escaped_hits
from app.core.permissions.secret_formats import KIND_LABELS, SecretHit, mask, token_hits
from app.core.permissions.secret_index import (
    MAX_INDEX_BYTES,
    MAX_SECRETS,
    MIN_MATCH_LEN,
    SecretIndex,
    encode,
)
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


class SecretMatcher:
    """The secrets a conversation has seen, and a fast search for them in outgoing text."""

    def __init__(self, *, max_secrets: int = MAX_SECRETS,
                 max_index_bytes: int = MAX_INDEX_BYTES) -> None:
        self._lock = threading.RLock()
        self._learnt = SecretIndex(max_secrets, max_index_bytes)

    # -- learning ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._learnt)

    @property
    def index_bytes(self) -> int:
        """Bytes of learnt values and their encodings currently indexed."""
        return self._learnt.index_bytes

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
        if len(encode(value)) < MIN_SECRET_LEN:
            log.debug("not learning a secret of %d characters from %s", len(value), source)
            return False
        self._add(value, source)
        return True

    def clear(self) -> None:
        with self._lock:
            self._learnt.clear()

    def _add(self, value: str, source: str) -> None:
        # Work out the windows outside the lock; only the insertion holds it.
        prepared = SecretIndex.prepare(value, source)
        if prepared is not None:
            with self._lock:
                self._learnt.add(prepared)

    # -- scanning ---------------------------------------------------------------------------

    def scan(self, text: str) -> list[SecretHit]:
        """Every secret in ``text``: learnt values (also escaped or base64-encoded) and
        well-known token formats, ordered by position. Empty when there is none."""
        hits = token_hits(text)
        data = encode(text)
        with self._lock:
            if self._learnt:
                hits += self._learnt_hits(text, "", data)
            with_space = self._learnt.with_space > 0
            if "%" in text or (with_space and "+" in text):
                hits += escaped_hits(text, with_space, self._decoded_hits)
            decoded = decoded_hits(data, self._bytes_hits)
        if decoded:
            hits += _new_hits(_char_offsets(text, data, decoded), hits)
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
        if self._learnt:
            found += self._learnt_hits(decoded, "percent-encoded")
        return found

    def _bytes_hits(self, data: bytes, tokens: bool) -> list[SecretHit]:
        """Learnt values, or token formats, in decoded bytes (``decoded_hits`` maps them
        back); byte offsets."""
        if tokens:
            return token_hits(data.decode("latin-1"))  # one character per byte
        found: list[SecretHit] = []
        if self._learnt:
            for start, end, entry in self._learnt.match(data):
                shown = mask(data[start:end].decode("utf-8", "replace"))
                found.append(SecretHit("learnt", entry.secret.source, shown, start, end,
                                       entry.encoding))
        return found

    def _learnt_hits(self, text: str, encoding: str,
                     data: bytes | None = None) -> list[SecretHit]:
        data = encode(text) if data is None else data
        spans = self._learnt.match(data)
        if not spans:
            return []
        ascii_only = len(data) == len(text)
        hits: list[SecretHit] = []
        for start, end, entry in spans:
            if not ascii_only:  # byte offsets to character offsets
                start, end = _char_offset(data, start), _char_offset(data, end)
            shown = mask(text[start:end])
            hits.append(SecretHit("learnt", entry.secret.source, shown, start, end,
                                  entry.encoding or encoding))
        return hits


def _char_offset(data: bytes, offset: int) -> int:
    return len(data[:offset].decode("utf-8", "ignore"))


def _char_offsets(text: str, data: bytes, hits: list[SecretHit]) -> list[SecretHit]:
    """Hits with byte offsets in ``data`` (``text`` encoded) as hits in ``text``."""
    if len(data) == len(text):
        return hits
    return [SecretHit(h.kind, h.source, h.masked, _char_offset(data, h.start),
                      _char_offset(data, h.end), h.encoding) for h in hits]


def _new_hits(found: list[SecretHit], known: list[SecretHit]) -> list[SecretHit]:
    """``found`` without the hits that overlap a known one of the same kind and source (a
    base64 blob the index saw is decoded too)."""
    return [hit for hit in found
            if not any(k.kind == hit.kind and k.source == hit.source and k.start < hit.end
                       and hit.start < k.end for k in known)]


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
