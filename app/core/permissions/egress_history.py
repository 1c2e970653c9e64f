"""What one conversation sent to each destination, so that a secret split over several calls
is seen whole (``EgressHistory``, held by the conversation's ``FlowState``).

Scanning each call alone misses a 40-character key sent as four 10-character query values to
the same host. The history keeps, per destination (``egress_destination``: the host of a URL
without its subdomains, an MCP server, or the tool), the data-carrying text of the calls that
went out (``outgoing_text``: a URL's path segments, query values and fragment, any other
string whole, all concatenated without separators), bounded, and ``joined_hits`` scans each
new call's text joined after it. A hit must reach into the new call: what the history alone
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
    parts: list[str] = []
    _collect(tool_input, parts, 0)
    return "".join(parts)


def _collect(value: Any, parts: list[str], depth: int) -> None:
    if depth > 32:
        return
    if isinstance(value, str):
        parts.append(_url_data(value) if "://" in value else value)
    elif isinstance(value, Mapping):
        for item in value.values():
            _collect(item, parts, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, parts, depth + 1)


def _url_data(text: str) -> str:
    try:
        url = urlsplit(text.strip())
    except ValueError:
        return text
    if not url.scheme or not url.netloc or any(c.isspace() for c in text.strip()):
        return text  # not one URL (a command line, prose): all of it
    values = [value for _, value in parse_qsl(url.query, keep_blank_values=True)]
    return "".join([*url.path.split("/"), *values, url.fragment])


class EgressHistory:
    """The recent outgoing text per destination (oldest destinations forgotten first)."""

    def __init__(self, max_chars: int = MAX_CHARS_PER_DESTINATION,
                 max_destinations: int = MAX_DESTINATIONS) -> None:
        self._max_chars = max_chars
        self._max_destinations = max_destinations
        self._sent: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def sent(self, destination: str) -> str:
        """What went to ``destination`` (its last ``max_chars`` characters)."""
        with self._lock:
            return self._sent.get(destination, "")

    def record(self, destination: str, tool_input: Any) -> None:
        """Remember what a call that went out sent to ``destination``."""
        text = outgoing_text(tool_input)
        if not text:
            return
        with self._lock:
            joined = (self._sent.pop(destination, "") + text)[-self._max_chars:]
            self._sent[destination] = joined
            while len(self._sent) > self._max_destinations:
                self._sent.popitem(last=False)

    def joined_hits(self, destination: str, tool_input: Any,
                    *scanners: _Scanner) -> list[SecretHit]:
        """Secrets in this call's outgoing text joined after what went to ``destination``
        before, found by ``scanners``; only hits that reach into this call. Their spans are
        in the joined text, their encoding says "sent in pieces"."""
        text = outgoing_text(tool_input)
        if not text:
            return []
        before = self.sent(destination)
        joined = before + text
        hits: list[SecretHit] = []
        for scanner in scanners:
            for hit in scanner.scan(joined):
                if hit.end > len(before):
                    encoding = f"{hit.encoding}, sent in pieces" if hit.encoding \
                        else "sent in pieces"
                    hits.append(SecretHit(hit.kind, hit.source, hit.masked, hit.start,
                                          hit.end, encoding))
        return hits

    def clear(self) -> None:
        with self._lock:
            self._sent.clear()
