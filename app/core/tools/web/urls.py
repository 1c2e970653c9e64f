"""URL text checks for web_fetch: what httpx would refuse or silently "repair", for messages."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported inside the functions that use them (start-up stays light)
    import httpx


# Everything URL parsing and request building can raise for a malformed URL: httpx's own
# errors, and the ValueError/UnicodeError family its helpers (ports, IPv6, IDNA, encoding) let
# through. One tuple, caught where a URL is parsed or first requested, so no spelling of a bad
# URL ever escapes as an exception.
@functools.cache
def url_errors() -> tuple[type[BaseException], ...]:
    import httpx
    import idna

    return (httpx.InvalidURL, httpx.UnsupportedProtocol, ValueError, UnicodeError, TypeError,
            idna.IDNAError)


def url_error_text(exc: BaseException) -> str:
    import idna

    text = str(exc) or type(exc).__name__
    if isinstance(exc, UnicodeError) and not isinstance(exc, idna.IDNAError):
        text = "it contains characters that are not valid text (e.g. a lone surrogate)"
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= 200 else text[:199] + "…"


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be a URL as written, for what httpx would silently "repair"
    (a backslash read as a path character, a space percent-encoded)."""
    if "\\" in text:
        return "it contains a backslash (\\); URLs use forward slashes"
    if any(ch.isspace() or ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in text):
        return "it contains spaces or control characters (percent-encode them, e.g. %20)"
    return None


def host_problem(url: httpx.URL) -> str | None:
    """Why the (already IDNA-encoded) host of ``url`` cannot exist in DNS."""
    import idna

    host = url.raw_host.decode("ascii", "replace").rstrip(".")
    if not host or host.startswith("["):
        return None  # an empty host is NetGuard's to refuse; IPv6 literals have no labels
    if len(host) > 253:
        return "the host name is longer than 253 characters"
    for label in host.split("."):
        if len(label) > 63:
            return f"the host label {label[:20]}… is longer than 63 characters"
        if label.lower().startswith("xn--"):
            try:
                idna.decode(label)
            except (idna.IDNAError, UnicodeError, ValueError):
                return f"the host label {label!r} is not valid punycode (IDNA)"
    return None


def same_site(a: httpx.URL, b: httpx.URL) -> bool:
    """Same host, ignoring a leading ``www.`` (scheme and port changes are fine)."""
    def norm(u: httpx.URL) -> bytes:
        host = u.raw_host.rstrip(b".").lower()
        return host[4:] if host.startswith(b"www.") else host
    return norm(a) == norm(b)


def shown(url: object, limit: int = 300) -> str:
    """A URL quoted for a message: storable text, and short."""
    text = repr(str(url).encode("utf-8", "backslashreplace").decode("utf-8"))
    return text if len(text) <= limit else text[: limit - 1] + "…"
