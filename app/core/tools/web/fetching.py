"""web_fetch's HTTP side: the guarded client, the redirect loop and the capped body read.

Every URL and every redirect hop goes through ``NetGuard``; the client connects only to
addresses checked at connect time (``GuardedTransport``). Redirects are followed here by hand
(the client never follows them), so each hop is checked and a hop to another host can be
reported instead of followed (``FetchSettings.follow_cross_host_redirects``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.tools.web.urls import (
    host_problem,
    same_site,
    shown,
    text_problem,
    url_error_text,
    url_errors,
)

if TYPE_CHECKING:  # imported inside the functions that use them: see web_fetch's WARMUP_IMPORTS
    import httpcore
    import httpx

    from app.core.tools.net_guard import NetGuard

MAX_BODY_BYTES = 5 * 1024 * 1024
MAX_REDIRECTS = 10
CONNECT_TIMEOUT_S = 10.0
USER_AGENT = "Tebiki/0.1 (web_fetch)"
ACCEPT = ("text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,"
          "application/json;q=0.8,*/*;q=0.1")
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True)
class FetchSettings:
    """The tool configuration (Configure dialog), with safe defaults and hard ceilings."""

    main_content: bool = True
    max_body_bytes: int = MAX_BODY_BYTES
    max_redirects: int = MAX_REDIRECTS
    follow_cross_host_redirects: bool = False
    user_agent: str = USER_AGENT

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> FetchSettings:
        def num(key: str, default: int, low: int, high: int) -> int:
            value = config.get(key, default)
            return min(max(int(value), low), high) if isinstance(value, int) else default

        return cls(
            main_content=bool(config.get("main_content", True)),
            max_body_bytes=num("max_body_bytes", MAX_BODY_BYTES, 1024, 50 * 1024 * 1024),
            max_redirects=num("max_redirects", MAX_REDIRECTS, 0, 20),
            follow_cross_host_redirects=bool(config.get("follow_cross_host_redirects", False)),
            user_agent=str(config.get("user_agent") or USER_AGENT),
        )


@dataclass
class Fetched:
    url: httpx.URL
    status: int
    reason: str
    content_type: str
    body: bytes = b""
    body_capped: bool = False
    redirects: list[str] = field(default_factory=list)
    cross_host_redirect: str | None = None
    refused_binary: bool = False


class FetchError(Exception):
    """A failure whose message is written for the model."""


def new_client(guard: NetGuard,
               network_backend: httpcore.AsyncNetworkBackend | None) -> httpx.AsyncClient:
    """A client that connects only where ``guard`` allows and follows no redirect itself."""
    from http.cookiejar import CookieJar, DefaultCookiePolicy

    import httpx

    from app.core.tools.net_guard import GuardedTransport

    return httpx.AsyncClient(
        transport=GuardedTransport(guard, inner=network_backend),
        follow_redirects=False,
        trust_env=False,
        # Stateless fetches: no site can set a cookie that later calls send back.
        cookies=CookieJar(DefaultCookiePolicy(allowed_domains=[])),
        event_hooks={"response": [_take_location]},
    )


def check_url(text: str, guard: NetGuard) -> httpx.URL:
    """``text`` parsed and checked; BlockedURLError for unsafe URLs, FetchError (a reason
    without context) for malformed ones. Never anything else."""
    from app.core.tools.net_guard import BlockedURLError

    try:
        # NetGuard first: its refusals (credentials, schemes, private hosts) are the most
        # specific messages.
        url = guard.check_url(text)
        problem = text_problem(text) or host_problem(url)
        _ = url.port  # parsed lazily by some httpx versions; fail here, not mid-request
    except BlockedURLError:
        raise
    except url_errors() as exc:
        problem = url_error_text(exc)
    else:
        if problem is None:
            return url
    raise FetchError(problem)


async def fetch(client: httpx.AsyncClient, url: httpx.URL, guard: NetGuard,
                http_timeout_s: float, settings: FetchSettings) -> Fetched:
    """GET ``url``, following same-site redirects (each checked) up to the limit."""
    import httpx

    timeout = httpx.Timeout(http_timeout_s, connect=min(CONNECT_TIMEOUT_S, http_timeout_s))
    headers = {"User-Agent": settings.user_agent, "Accept": ACCEPT}
    chain: list[str] = [str(url)]
    seen = {str(url)}
    for _hop in range(settings.max_redirects + 1):
        try:
            request = client.build_request("GET", url, headers=headers, timeout=timeout)
        except url_errors() as exc:
            if len(chain) == 1:
                raise
            raise FetchError(f"{chain[-2]} redirected to {shown(chain[-1])}, which cannot "
                             f"be requested: {url_error_text(exc)}. The site's redirect "
                             "is broken; try a different URL.") from None
        async with _send(client, request) as resp:
            location = resp.extensions.get(LOCATION)
            if resp.status_code in REDIRECT_STATUSES and location:
                target = redirect_target(url, location, guard, chain)
                if not (settings.follow_cross_host_redirects or same_site(url, target)):
                    return Fetched(url, resp.status_code, resp.reason_phrase, "",
                                   redirects=chain[1:], cross_host_redirect=str(target))
                if str(target) in seen:
                    raise FetchError(
                        "Redirect loop: " + " → ".join([*chain, str(target)]) +
                        ". The site keeps redirecting in a circle (it may need cookies or "
                        "a browser); try a different URL.")
                seen.add(str(target))
                chain.append(str(target))
                url = target
                continue
            return await read_body(url, resp, settings, chain[1:])
    raise FetchError(
        f"Too many redirects (more than {settings.max_redirects}): " + " → ".join(chain) +
        ". Try the last URL directly or a different page.")


def redirect_target(url: httpx.URL, location: str, guard: NetGuard,
                    chain: list[str]) -> httpx.URL:
    import httpx

    from app.core.tools.net_guard import BlockedURLError

    location = location.strip()
    problem = text_problem(location)
    if problem is None:
        try:
            # An http(s) location with an empty host ("http:///x", "http://:80/x") would
            # be joined onto the current host, which is a guess; refuse it instead. (Other
            # schemes are refused by NetGuard with their own message.)
            parsed = httpx.URL(location)
            if parsed.scheme in ("http", "https") and not parsed.raw_host:
                problem = "it has no host name"
            target = url.join(location)
        except url_errors() as exc:
            problem = url_error_text(exc)
        if problem is None:
            try:
                return check_url(str(target), guard)
            except BlockedURLError as exc:
                raise BlockedURLError(f"The redirect from {chain[-1]} to {shown(target)} "
                                      f"was refused. {exc}") from None
            except FetchError as exc:
                problem = str(exc)
    raise FetchError(f"{chain[-1]} redirected to a malformed location {shown(location)}: "
                     f"{problem}. The site's redirect is broken; try a different URL or the "
                     "site's home page.")


async def read_body(url: httpx.URL, resp: httpx.Response, settings: FetchSettings,
                    redirects: list[str]) -> Fetched:
    from app.core.tools.web_content import classify, parse_content_type

    content_type = resp.headers.get("content-type", "")
    fetched = Fetched(url, resp.status_code, resp.reason_phrase, content_type,
                      redirects=redirects)
    mime, _charset = parse_content_type(content_type)
    if mime and classify(mime, b"") == "binary":
        fetched.refused_binary = True  # do not download what we will not show
        return fetched
    cap = settings.max_body_bytes
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_bytes():
        room = cap - size
        if len(chunk) >= room:
            chunks.append(chunk[:room])
            size += room
            declared = resp.headers.get("content-length")
            fetched.body_capped = len(chunk) > room or declared != str(cap)
            break
        chunks.append(chunk)
        size += len(chunk)
    fetched.body = b"".join(chunks)
    return fetched


def describe_http_error(url: httpx.URL, exc: httpx.HTTPError) -> str:
    import httpx

    text = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError):
        if "CERTIFICATE" in text.upper() or "SSL" in text.upper():
            return (f"TLS error connecting to {url.host}: {text}. The site's certificate is "
                    "invalid; web_fetch will not read it insecurely.")
        return (f"Could not connect to {url.host}: {text}. Check the host name, or try again "
                "later.")
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"The server at {url.host} broke the HTTP protocol: {text}. Try again later."
    return f"HTTP request to {url} failed: {type(exc).__name__}: {text}."


LOCATION = "tebiki.location"


async def _take_location(response: httpx.Response) -> None:
    """Move ``Location`` out of the headers before httpx sees it.

    Even with follow_redirects off, httpx parses Location to build ``response.next_request``,
    and a malformed one raises from ``send()`` (InvalidURL, or RemoteProtocolError naming no
    redirect) before we get the response. This hook runs first; ``redirect_target`` then
    parses the location itself, with a message the model can act on.
    """
    location = response.headers.get("location")
    if location is not None:
        response.extensions[LOCATION] = location
        del response.headers["location"]


class _send:
    """``client.send(request, stream=True)`` as an async context manager that closes the
    response, like ``client.stream`` (which builds the request itself, inside the try)."""

    def __init__(self, client: httpx.AsyncClient, request: httpx.Request) -> None:
        self._client, self._request = client, request
        self._response: httpx.Response | None = None

    async def __aenter__(self) -> httpx.Response:
        self._response = await self._client.send(self._request, stream=True)
        return self._response

    async def __aexit__(self, *exc: object) -> None:
        if self._response is not None:
            await self._response.aclose()
