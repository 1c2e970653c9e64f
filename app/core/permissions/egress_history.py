"""What one conversation sent to each destination, so that a secret split over several calls
is seen whole (``EgressHistory``, held by the conversation's ``FlowState``).

Scanning each call alone misses a 40-character key sent as four 10-character query values to
the same host. The history keeps, per destination (``egress_destination``: the host of a URL
without its subdomains, an MCP server, or the tool), the data-carrying text of the calls that
went out (``outgoing_text``: a URL's path segments, query values and fragment, any other
string whole, all concatenated without separators; and the same per slot, ``outgoing_slots``,
so that pieces sent in one query parameter are joined even when other parts of the URL change),
bounded (``MAX_CHARS_PER_DESTINATION`` of all of it, a sixteenth of that per slot, the last
``MAX_DESTINATIONS`` destinations), and ``joined_hits`` scans each new call's text joined after
it. A hit must reach into the new call: what the history alone
holds went out already (or was learnt only afterwards) and must not block every later call.

Only calls that go out are recorded (``record``): the permission check records the calls it
allows; a call a person approves must be recorded by whoever runs it.

Thread-safe: decisions run in worker threads.
"""

from __future__ import annotations

import ipaddress
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final, Protocol
from urllib.parse import parse_qsl, urlsplit

from app.core.permissions.secret_formats import SecretHit

__all__ = ["EgressHistory", "egress_destination", "outgoing_text"]

MAX_CHARS_PER_DESTINATION: Final = 64 * 1024
MAX_DESTINATIONS: Final = 64
JOIN_WINDOW: Final = 2048  # characters of a slot's history scanned joined with a new call
_MAX_SLOTS: Final = 64
_SLOT_SHARE: Final = 16  # a slot keeps 1/16 of what all of it keeps (4 KB): at most ~4 x 64 KB
_ALL: Final = "all"  # every slot's text concatenated in order
_BUILTIN: Final = "builtin"


class _Scanner(Protocol):
    def scan(self, text: str) -> list[SecretHit]: ...


def egress_destination(server_id: str, tool_name: str, tool_input: Mapping[str, Any]) -> str:
    """Where a call sends its data, as a key: "host:example.com" for a URL (subdomains of one
    domain are one destination: an attacker owns them all), "server:<id>" for an MCP or
    custom tool, "tool:<name>" for a built-in tool without a URL."""
    url = tool_input.get("url")
    if isinstance(url, str):
        host = _host(url)
        if host:
            return f"host:{host}"
    if server_id and server_id != _BUILTIN:
        return f"server:{server_id}"
    return f"tool:{tool_name}"


def _host(url: str) -> str:
    try:
        host = urlsplit(url.strip()).hostname or ""
    except ValueError:
        return ""
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        return ".".join(host.rstrip(".").split(".")[-2:])


def outgoing_text(tool_input: Any) -> str:
    """The data an input carries, concatenated without separators: of a URL its path
    segments, query values and fragment; any other string whole; keys, numbers and booleans
    left out."""
    return "".join(outgoing_slots(tool_input).values())


def outgoing_slots(tool_input: Any) -> dict[str, str]:
    """The data an input carries by where it sits: "path 2" (a URL's third path segment),
    "query d" (the values of parameter d), "fragment", "text 0" (the first other string)...
    A secret sent one piece per call in the same slot is joined there even when the calls
    also change other parts of the URL."""
    slots: dict[str, str] = {}
    _collect(tool_input, slots, 0)
    return slots


def _collect(value: Any, slots: dict[str, str], depth: int) -> None:
    if depth > 32 or len(slots) >= _MAX_SLOTS:
        return
    if isinstance(value, str):
        if "://" not in value or not _url_slots(value, slots):
            slots[f"text {len(slots)}"] = value
    elif isinstance(value, Mapping):
        for item in value.values():
            _collect(item, slots, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, slots, depth + 1)


def _url_slots(text: str, slots: dict[str, str]) -> bool:
    """Add a URL's data to ``slots``; False when ``text`` is not one URL."""
    text = text.strip()
    try:
        url = urlsplit(text)
    except ValueError:
        return False
    if not url.scheme or not url.netloc or any(c.isspace() for c in text):
        return False  # a command line, prose: taken whole
    for index, segment in enumerate(url.path.split("/")):
        if segment:
            slots[f"path {index}"] = segment
    for name, value in parse_qsl(url.query, keep_blank_values=True):
        slots[f"query {name}"] = slots.get(f"query {name}", "") + value
    if url.fragment:
        slots["fragment"] = url.fragment
    return True


class EgressHistory:
    """The recent outgoing text per destination (oldest destinations forgotten first): all of
    it concatenated, and per slot (``outgoing_slots``)."""

    def __init__(self, max_chars: int = MAX_CHARS_PER_DESTINATION,
                 max_destinations: int = MAX_DESTINATIONS) -> None:
        self._max_chars = max_chars
        self._max_destinations = max_destinations
        self._sent: OrderedDict[str, dict[str, str]] = OrderedDict()
        self._lock = threading.Lock()

    def sent(self, destination: str, slot: str = _ALL) -> str:
        """What went to ``destination`` (its last ``max_chars`` characters)."""
        with self._lock:
            return self._sent.get(destination, {}).get(slot, "")

    def record(self, destination: str, tool_input: Any) -> None:
        """Remember what a call that went out sent to ``destination``."""
        slots = _with_all(outgoing_slots(tool_input))
        if not slots[_ALL]:
            return
        with self._lock:
            sent = self._sent.pop(destination, {})
            for slot, text in slots.items():
                keep = self._max_chars if slot == _ALL else self._max_chars // _SLOT_SHARE
                sent[slot] = (sent.get(slot, "") + text)[-keep:]
            while len(sent) > _MAX_SLOTS + 1:  # the oldest slots other than all of it
                del sent[next(slot for slot in sent if slot != _ALL)]
            self._sent[destination] = sent
            while len(self._sent) > self._max_destinations:
                self._sent.popitem(last=False)

    def joined_hits(self, destination: str, tool_input: Any,
                    *scanners: _Scanner) -> list[SecretHit]:
        """Secrets in this call's outgoing text joined after what went to ``destination``
        before (all of it, and slot by slot), found by ``scanners``; only hits that reach into
        this call. Their spans are in the joined text, their encoding says "sent in
        pieces"."""
        slots = _with_all(outgoing_slots(tool_input))
        if not slots[_ALL]:
            return []
        with self._lock:
            sent = dict(self._sent.get(destination, {}))
        # One text: each slot's history and this call's part, NUL between slots (no learnt
        # value holds one); where this call's part starts in each.
        texts: list[str] = []
        fresh: list[tuple[int, int]] = []  # (where this call's part starts, where it ends)
        at = 0
        for slot, text in slots.items():
            before = sent.get(slot, "")
            if not text or (slot != _ALL and not before):
                continue  # nothing to join (the plain scan and "all" see it)
            # Only the end of what went before: a secret completed by this call starts within
            # JOIN_WINDOW characters of it (any MIN_MATCH_LEN piece of a value is found, also
            # hex of a 1 KB one), and rescanning all the history at every call would grow
            # the cost of a decision with the conversation.
            before = before[-JOIN_WINDOW:]
            texts.append(before + text)
            fresh.append((at + len(before), at + len(before) + len(text)))
            at += len(before) + len(text) + 1
        joined = "\0".join(texts)
        hits: list[SecretHit] = []
        for scanner in scanners:
            for hit in scanner.scan(joined):
                if any(hit.end > start and hit.start < end for start, end in fresh):
                    encoding = f"{hit.encoding}, sent in pieces" if hit.encoding \
                        else "sent in pieces"
                    hits.append(SecretHit(hit.kind, hit.source, hit.masked, hit.start,
                                          hit.end, encoding))
        return hits

    def clear(self) -> None:
        with self._lock:
            self._sent.clear()


def _with_all(slots: dict[str, str]) -> dict[str, str]:
    return {_ALL: "".join(slots.values()), **slots}
