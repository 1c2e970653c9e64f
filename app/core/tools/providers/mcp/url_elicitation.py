"""URL-mode elicitation (MCP 2025-11-25): a server asks the person to open a web page — a
sign-in, a payment, a key typed out of band — so that what is entered there never passes
through the client or the model.

A server asks in two ways: an ``elicitation/create`` request in mode ``"url"``
(``mcp.server_requests``), or a tool call failing with -32042 "URL elicitation required"
whose error data lists the pages (``mcp.elicitation_required``). Either way the person sees
the server, the full URL and its host, and only their click opens it in the browser
(``app.ui.dialogs.url_elicitation``); the answer is accept (they chose to open it), decline or
cancel. This module reads a request into ``UrlElicitation``, SDK-free; only web addresses
(http, https) are ever shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

__all__ = ["MAX_URL_CHARS", "UrlElicitation", "url_elicitation_from_wire"]

# Longer than any sign-in link; past it a URL is refused rather than shown cut.
MAX_URL_CHARS = 8192
_SCHEMES = ("https", "http")


@dataclass(frozen=True)
class UrlElicitation:
    """One page a server asks the person to open. ``message`` is the server's text (untrusted,
    shown as plain text); ``elicitation_id`` is opaque and only goes back to the server."""

    message: str
    url: str
    elicitation_id: str = ""

    @property
    def host(self) -> str:
        """The host the URL leads to, as the browser reads it (userinfo and port aside)."""
        return urlsplit(self.url).hostname or ""

    @property
    def ascii_host(self) -> str:
        """The host in its ASCII (IDNA) spelling, so look-alike letters cannot pass as another
        site's name; the host itself when it is ASCII already or has no such spelling."""
        host = self.host
        if host.isascii():
            return host
        try:
            return host.encode("idna").decode("ascii")
        except UnicodeError:
            return host


def url_elicitation_from_wire(wire: Any) -> UrlElicitation:
    """A ``UrlElicitation`` from the wire form of ``ElicitRequestURLParams`` (camelCase keys).
    Raises ValueError when it cannot be shown to a person: no URL, not a web address, no host,
    a user name before the host, or characters a browser would read otherwise than a person
    (or this parser) does."""
    if not isinstance(wire, Mapping):
        raise ValueError("the request is not an object")
    url = wire.get("url")
    if not isinstance(url, str) or not url.strip():
        raise ValueError("the request has no URL")
    url = url.strip()
    if len(url) > MAX_URL_CHARS:
        raise ValueError(f"the URL is longer than {MAX_URL_CHARS} characters")
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        raise ValueError("the URL contains spaces or invisible characters")
    if "\\" in url:  # browsers read a backslash as "/", Python's parser does not
        raise ValueError("the URL contains a backslash")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port  # a port that is not a number
    except ValueError as exc:
        raise ValueError(f"the URL cannot be read: {exc}") from None
    if parts.scheme.lower() not in _SCHEMES:
        raise ValueError(f"only web addresses (http, https) are opened, not {parts.scheme!r}")
    if not host:
        raise ValueError("the URL has no host")
    if "@" in parts.netloc:  # "https://your-bank.example@elsewhere.example/" leads elsewhere
        raise ValueError("the URL carries a user name before its host")
    message = wire.get("message")
    elicitation_id = wire.get("elicitationId")
    return UrlElicitation(message=message if isinstance(message, str) else "", url=url,
                          elicitation_id=elicitation_id if isinstance(elicitation_id, str)
                          else "")
