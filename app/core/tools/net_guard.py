"""Outbound HTTP safety for tools that fetch URLs chosen by the model (SSRF defence).

A model can be steered by the pages it reads, so every URL it asks for is treated as hostile:

* ``check_url`` refuses what is wrong before any traffic: non-http(s) schemes, over-long URLs,
  credentials in the URL, odd host spellings (``0x7f.1``, ``2130706433``, ``0177.0.0.1`` — forms
  that resolvers silently turn into IPs), ``localhost`` names, and literal IPs that are not public.
* ``GuardedNetworkBackend`` is the httpcore network backend the HTTP client connects through. It
  resolves the host itself, checks *every* address the name resolves to, and then connects to the
  address it just checked. There is no second lookup between check and connect, so a DNS answer
  that changes between the two (DNS rebinding) cannot sneak a private address in. TLS still uses
  the host name for SNI and certificate verification, because httpcore passes the name, not the
  IP, to ``start_tls``. Pooled connections were each checked when they were opened.

Proxies from the environment are deliberately not used by clients built here
(``trust_env=False``): a proxy would resolve and connect on our behalf and bypass the checks.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL_LENGTH = 4096
ALLOWED_SCHEMES = ("http", "https")

# inet_aton() accepts 1–4 dot-separated parts, each decimal, octal (leading 0) or hex (0x).
_NUMERIC_HOST = re.compile(r"^(0x[0-9a-f]*|\d+)(\.(0x[0-9a-f]*|\d+)){0,3}\.?$", re.IGNORECASE)
_HOST_CHARS = re.compile(r"^[a-z0-9._-]+$")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_GLOBAL_UNICAST_V6 = ipaddress.IPv6Network("2000::/3")

# IANA special-purpose ranges, spelled out because ``ipaddress``'s own tables differ between
# Python patch releases (3.11.7 calls 192.0.0.8 global, for example).
_SPECIAL_V4: tuple[tuple[ipaddress.IPv4Network, str], ...] = tuple(
    (ipaddress.IPv4Network(net), why) for net, why in (
        ("0.0.0.0/8", "a 'this network' address"),
        ("10.0.0.0/8", "a private-network address"),
        ("100.64.0.0/10", "a carrier-grade NAT (shared) address"),
        ("127.0.0.0/8", "a loopback address"),
        ("169.254.0.0/16", "a link-local address (cloud metadata services live here)"),
        ("172.16.0.0/12", "a private-network address"),
        ("192.0.0.0/24", "an IETF protocol address"),
        ("192.0.2.0/24", "a documentation address"),
        ("192.88.99.0/24", "a 6to4 relay address"),
        ("192.168.0.0/16", "a private-network address"),
        ("198.18.0.0/15", "a benchmarking address"),
        ("198.51.100.0/24", "a documentation address"),
        ("203.0.113.0/24", "a documentation address"),
        ("224.0.0.0/4", "a multicast address"),
        ("240.0.0.0/4", "a reserved address"),
    ))
_SPECIAL_V6: tuple[tuple[ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.IPv6Network(net), why) for net, why in (
        ("64:ff9b:1::/48", "a local-use NAT64 address"),
        ("2001::/23", "an IETF protocol address"),
        ("2001:db8::/32", "a documentation address"),
        ("2002::/16", "a 6to4 address"),
        ("3fff::/20", "a documentation address"),
    ))

Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]
# (host as written in the URL, one of its addresses) -> why it is refused, or None if allowed.
AddressFilter = Callable[[str, IPAddress], "str | None"]


class BlockedURLError(Exception):
    """A URL or address the policy refuses; the message is written for the model."""


def blocked_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public internet address, or None if it is one."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:  # ::ffff:a.b.c.d is an IPv4 connection
            return _v4_reason(ip.ipv4_mapped, f" (IPv4 {ip.ipv4_mapped} in IPv6 form)")
        embedded = ip.sixtofour or (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
                                    if ip in _NAT64 else None)
        if embedded is not None:
            inner = _v4_reason(embedded, f" (IPv4 {embedded} embedded in IPv6)")
            if inner:
                return inner
        return _v6_reason(ip)
    return _v4_reason(ip)


def _v4_reason(ip: ipaddress.IPv4Address, suffix: str = "") -> str | None:
    for net, why in _SPECIAL_V4:
        if ip in net:
            return why + suffix
    if not ip.is_global:  # anything newer that Python knows about
        return "not a public internet address" + suffix
    return None


def _v6_reason(ip: ipaddress.IPv6Address) -> str | None:
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_unspecified:
        return "the unspecified address"
    if ip.scope_id:
        return "an IPv6 address with a zone id"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_site_local:
        return "a site-local address"
    if ip in ipaddress.IPv6Network("fc00::/7"):
        return "a private-network (unique local) address"
    if ip not in _GLOBAL_UNICAST_V6 and ip not in _NAT64:
        return "a reserved address"
    for net, why in _SPECIAL_V6:
        if ip in net:
            return why
    if ip in _NAT64:
        return None  # the embedded IPv4 address was public
    if not ip.is_global:
        return "not a public internet address"
    return None


def default_address_filter(host: str, ip: IPAddress) -> str | None:
    return blocked_reason(ip)


def literal_ip(host: str) -> IPAddress | None:
    """The address if ``host`` is a canonical IPv4 or (bracketless) IPv6 literal."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def is_localhost_name(host: str) -> bool:
    """RFC 6761: ``localhost`` and every ``*.localhost`` name are loopback by definition."""
    host = host.rstrip(".").lower()
    return host == "localhost" or host.endswith(".localhost")


async def system_resolve(host: str, port: int) -> list[IPAddress]:
    """Resolve through the OS resolver without blocking the event loop."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    out: list[IPAddress] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if ip not in out:
            out.append(ip)
    return out


class NetGuard:
    """The outbound policy of one tool call: what may be fetched and how names are resolved.

    ``resolver`` and ``address_filter`` are seams: tests map fake public names to 127.0.0.1 and
    mark exactly those names as public, while every other address keeps the real checks.
    """

    def __init__(
        self,
        *,
        allow_private: bool = False,
        resolver: Resolver | None = None,
        address_filter: AddressFilter | None = None,
        max_url_length: int = MAX_URL_LENGTH,
    ) -> None:
        self.allow_private = allow_private
        self.resolver: Resolver = resolver or system_resolve
        self.address_filter: AddressFilter = address_filter or default_address_filter
        self.max_url_length = max_url_length

    # -- before any traffic ----------------------------------------------------------------

    def check_url(self, url: str | httpx.URL) -> httpx.URL:
        """Parse ``url`` with the same parser the client uses and refuse unsafe ones."""
        text = str(url)
        if len(text) > self.max_url_length:
            raise BlockedURLError(
                f"The URL is {len(text):,} characters long; the limit is "
                f"{self.max_url_length:,}. Use a shorter URL (drop tracking parameters).")
        if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
            raise BlockedURLError("The URL contains spaces or control characters. "
                                  "Percent-encode them (a space is %20) and try again.")
        try:
            parsed = httpx.URL(text)
        except (httpx.InvalidURL, ValueError) as exc:
            raise BlockedURLError(f"The URL could not be parsed ({exc}). Pass a full URL "
                                  "such as https://example.com/page.") from None
        if parsed.scheme not in ALLOWED_SCHEMES:
            shown = parsed.scheme or "(none)"
            raise BlockedURLError(f"Only http:// and https:// URLs can be fetched, not "
                                  f"scheme {shown!r}. Pass a URL that starts with https://.")
        if parsed.userinfo:
            raise BlockedURLError("URLs with a user name or password (user:pass@host) are "
                                  "refused so credentials never leave in a request. Remove the "
                                  "part before '@' and try again.")
        port = parsed.port
        if port is not None and not 0 < port < 65536:
            raise BlockedURLError(f"Port {port} is not a valid TCP port.")
        host = parsed.raw_host.decode("ascii", "replace")
        self.check_host(host)
        return parsed

    def check_host(self, host: str) -> None:
        """Refuse host spellings and literal addresses that are not plainly public."""
        if not host:
            raise BlockedURLError("The URL has no host name. Pass a full URL such as "
                                  "https://example.com/page.")
        bare = host.rstrip(".").lower()
        if "%" in bare:
            raise BlockedURLError(f"The host {host!r} contains '%' (percent-encoding or an IPv6 "
                                  "zone id); write the host name plainly.")
        ip = literal_ip(bare)
        if ip is None and ":" in bare:  # httpx strips an IPv6 literal's brackets
            raise BlockedURLError(f"{host!r} is not a valid IPv6 address.")
        if ip is None:
            if _NUMERIC_HOST.match(bare):
                raise BlockedURLError(
                    f"The host {host!r} is an IP address in a non-standard notation (decimal, "
                    "octal or hex). Write IPv4 addresses as four decimal numbers, e.g. "
                    "93.184.215.14, or use the host name.")
            if not _HOST_CHARS.match(bare) or ".." in bare or bare.startswith("."):
                raise BlockedURLError(f"The host {host!r} is not a valid host name.")
            if is_localhost_name(bare) and not self.allow_private:
                raise self._private_error(host, "the local machine (localhost)")
            return
        self.check_address(host, ip)

    def check_address(self, host: str, ip: IPAddress) -> None:
        if self.allow_private:
            return
        reason = self.address_filter(host, ip)
        if reason:
            where = host if host == str(ip) else f"{host} ({ip})"
            raise self._private_error(where, reason)

    @staticmethod
    def _private_error(where: str, reason: str) -> BlockedURLError:
        return BlockedURLError(
            f"Refused: {where} is {reason}. web_fetch only reaches public internet addresses; "
            "requests to the local machine or private networks are blocked unless the person "
            "enables 'Allow private network' in web_fetch's Configure dialog. Do not retry "
            "with another spelling of the same address.")

    # -- at connect time -------------------------------------------------------------------

    async def resolve_checked(self, host: str, port: int) -> list[IPAddress]:
        """Addresses for ``host`` that passed the policy; refuses if *any* address is unsafe.

        Refusing on any bad answer (instead of skipping it) keeps the behaviour predictable and
        defeats answers that mix a public decoy with a private target.
        """
        self.check_host(host)
        ip = literal_ip(host.rstrip("."))
        if ip is not None:
            return [ip]
        try:
            addresses = await self.resolver(host.rstrip("."), port)
        except (OSError, UnicodeError) as exc:
            raise httpcore.ConnectError(f"DNS lookup for {host!r} failed: {exc}") from exc
        if not addresses:
            raise httpcore.ConnectError(f"DNS lookup for {host!r} returned no addresses")
        for address in addresses:
            self.check_address(host, address)
        return addresses


class GuardedNetworkBackend(httpcore.AsyncNetworkBackend):
    """Resolve, check, then connect to the checked address (see the module docstring)."""

    def __init__(self, guard: NetGuard, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self.guard = guard
        self.inner: httpcore.AsyncNetworkBackend = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                addresses = await self.guard.resolve_checked(host, port)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"DNS lookup for {host!r} timed out") from exc
        last_error: Exception | None = None
        for address in addresses:  # happy-eyeballs-lite: try each checked address in order
            try:
                return await self.inner.connect_tcp(
                    str(address), port, timeout=timeout, local_address=local_address,
                    socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc
        assert last_error is not None
        raise last_error

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise BlockedURLError("Unix sockets are not reachable from web tools.")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport with its connection pool routed through ``GuardedNetworkBackend``.

    httpx has no public hook for the network backend, so the pool it builds is replaced by an
    equivalent one (same TLS context and limits) that uses ours; everything else — exception
    mapping, response streaming — stays httpx's code.
    """

    def __init__(self, guard: NetGuard, *, inner: httpcore.AsyncNetworkBackend | None = None,
                 limits: httpx.Limits | None = None) -> None:
        limits = limits or httpx.Limits(max_connections=20, max_keepalive_connections=10,
                                        keepalive_expiry=30.0)
        super().__init__(trust_env=False, limits=limits)
        if not isinstance(getattr(self, "_pool", None), httpcore.AsyncConnectionPool):
            raise RuntimeError("unsupported httpx version: cannot install the guarded backend")
        self._pool = httpcore.AsyncConnectionPool(
            # trust_env here only means SSL_CERT_FILE/SSL_CERT_DIR (a custom CA), not proxies.
            ssl_context=httpx.create_ssl_context(trust_env=True),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedNetworkBackend(guard, inner),
        )
