"""web_search's providers: the Brave Search API and DuckDuckGo's no-JavaScript HTML page.

Each provider turns a query into ``SearchResult``s through the tool's shared HTTP client and
raises ``SearchError`` with a message that tells the model (and the person) what to do. See
``app.core.tools.builtin.web_search`` for how one is chosen.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from app.core.secrets import (
    BRAVE_SEARCH_API_KEY,
    ENVIRONMENT_VARIABLES,
    KEYRING_SERVICE,
    get_secret,
    secret_from_environment,
)

if TYPE_CHECKING:  # imported inside the functions that use them: see web_search's WARMUP_IMPORTS
    import httpx
    from selectolax.lexbor import LexborHTMLParser, LexborNode

log = logging.getLogger(__name__)

BRAVE_ENDPOINT = "https://api.search.brave.com/res/v1/web/search"
DUCKDUCKGO_ENDPOINT = "https://html.duckduckgo.com/html/"
KEYRING_BRAVE_KEY = BRAVE_SEARCH_API_KEY
BRAVE_KEY_ENV = ENVIRONMENT_VARIABLES[BRAVE_SEARCH_API_KEY]
KEYRING_TIMEOUT_S = 5.0
DDG_MAX_PAGES = 3
USER_AGENT = "Mozilla/5.0 (compatible; Tebiki/0.1; web_search)"

FIX_KEY = (f"Store a key in the OS keyring (service '{KEYRING_SERVICE}', name "
           f"'{KEYRING_BRAVE_KEY}') or set the {BRAVE_KEY_ENV} environment variable, or switch "
           "web_search's provider to 'duckduckgo' in its Configure dialog.")


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    description: str


class SearchError(Exception):
    """A failure whose message tells the model (and the person) what to do."""


async def brave_api_key() -> str | None:
    """The Brave key (environment, then the OS keyring; see app.core.secrets)."""
    try:
        # Keyring backends may block (D-Bus, an unlock prompt): never on the event loop.
        return await asyncio.wait_for(asyncio.to_thread(get_secret, BRAVE_SEARCH_API_KEY),
                                      KEYRING_TIMEOUT_S)
    except TimeoutError:
        log.info("keyring lookup for the Brave key timed out")
        return secret_from_environment(BRAVE_SEARCH_API_KEY)


def _plain(fragment: str) -> str:
    """Text of a small HTML fragment (Brave highlights matches with <strong>)."""
    if "<" not in fragment and "&" not in fragment:
        return " ".join(fragment.split())
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(f"<body>{fragment}</body>")
    body = tree.body
    return " ".join((body.text(deep=True) if body is not None else fragment).split())


def _retry_after(resp: httpx.Response) -> str:
    value = resp.headers.get("retry-after") or resp.headers.get("x-ratelimit-reset", "")
    first = value.split(",")[0].strip()
    return f" (the server asks to wait {first} s)" if first.isdigit() else ""


# -- providers ------------------------------------------------------------------------------

class BraveProvider:
    name = "brave"

    def __init__(self, endpoint: str, api_key: str) -> None:
        self.endpoint = endpoint
        self.api_key = api_key

    async def search(self, client: httpx.AsyncClient, query: str, count: int,
                     timeout: httpx.Timeout) -> list[SearchResult]:
        resp = await client.get(
            self.endpoint,
            params={"q": query, "count": count},
            headers={"X-Subscription-Token": self.api_key, "Accept": "application/json"},
            timeout=timeout,
        )
        if resp.status_code in (401, 403):
            raise SearchError(f"Brave Search rejected the API key (HTTP {resp.status_code}). "
                              f"The key is missing, wrong or expired. {FIX_KEY}")
        if resp.status_code == 429:
            raise SearchError(
                "Brave Search rate limit reached (HTTP 429)" + _retry_after(resp) +
                ". Wait before searching again, search less often, or upgrade the Brave plan.")
        if resp.status_code == 422:
            raise SearchError(f"Brave Search refused the query (HTTP 422): {_snippet(resp)}. "
                              "Shorten or simplify the query.")
        if resp.status_code >= 400:
            raise SearchError(f"Brave Search failed (HTTP {resp.status_code}): {_snippet(resp)}."
                              " Try again later, or switch web_search's provider to "
                              "'duckduckgo'.")
        try:
            data = resp.json()
        except ValueError:
            raise SearchError("Brave Search returned something that is not JSON; check "
                              "brave_endpoint in web_search's configuration.") from None
        web = data.get("web") if isinstance(data, dict) else None
        items = web.get("results") if isinstance(web, dict) else None
        results = []
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict) or not item.get("url"):
                continue
            results.append(SearchResult(
                title=_plain(str(item.get("title") or "")),
                url=str(item["url"]),
                description=_plain(str(item.get("description") or "")),
            ))
        return results[:count]


class DuckDuckGoProvider:
    name = "duckduckgo"

    def __init__(self, endpoint: str, region: str | None = None) -> None:
        import httpx

        self.endpoint = httpx.URL(endpoint)
        self.region = region

    async def search(self, client: httpx.AsyncClient, query: str, count: int,
                     timeout: httpx.Timeout) -> list[SearchResult]:
        form: dict[str, str] = {"q": query, "b": ""}
        if self.region:
            form["kl"] = self.region
        url = self.endpoint
        results: list[SearchResult] = []
        seen: set[str] = set()
        for _page in range(DDG_MAX_PAGES):
            resp = await client.post(url, data=form, timeout=timeout,
                                     headers={"User-Agent": USER_AGENT,
                                              "Referer": str(self.endpoint)})
            tree = self._check(resp)
            for result in self._parse(tree):
                if result.url not in seen:
                    seen.add(result.url)
                    results.append(result)
            if len(results) >= count:
                break
            next_page = self._next_page(tree)
            if next_page is None:
                break
            action, form = next_page
            url = self.endpoint.join(action) if action else self.endpoint
        return results[:count]

    @staticmethod
    def _check(resp: httpx.Response) -> LexborHTMLParser:
        from selectolax.lexbor import LexborHTMLParser

        if resp.status_code == 429 or resp.status_code == 202:
            raise SearchError(
                f"DuckDuckGo is rate-limiting this computer (HTTP {resp.status_code})" +
                _retry_after(resp) + ". Wait a few minutes before searching again, or "
                "configure the Brave provider with an API key in web_search's Configure dialog.")
        if resp.status_code >= 400:
            raise SearchError(f"DuckDuckGo search failed (HTTP {resp.status_code}). Try again "
                              "later, or switch web_search's provider to 'brave'.")
        tree = LexborHTMLParser(resp.text)
        if tree.css_first(".anomaly-modal, #challenge-form, form[action*='anomaly']"):
            raise SearchError(
                "DuckDuckGo answered with a bot check (CAPTCHA) instead of results. Wait a few "
                "minutes before searching again, or configure the Brave provider with an API "
                "key in web_search's Configure dialog.")
        return tree

    @staticmethod
    def _parse(tree: LexborHTMLParser) -> list[SearchResult]:
        out = []
        for node in tree.css("div.result, div.web-result"):
            classes = (node.attributes.get("class") or "").split()
            if "result--ad" in classes or "result--ads" in classes:
                continue
            link = node.css_first("a.result__a")
            if link is None:
                continue
            url = _unwrap_ddg_href(link.attributes.get("href") or "")
            if not url:
                continue
            snippet = node.css_first(".result__snippet")
            out.append(SearchResult(
                title=_text(link),
                url=url,
                description=_text(snippet) if snippet is not None else "",
            ))
        return out

    @staticmethod
    def _next_page(tree: LexborHTMLParser) -> tuple[str, dict[str, str]] | None:
        for form in tree.css("form"):
            if form.css_first("input[type=submit][value=Next], input[value='Next']") is None:
                continue
            fields = {}
            for field in form.css("input[type=hidden]"):
                name = field.attributes.get("name")
                if name:
                    fields[name] = field.attributes.get("value") or ""
            if fields.get("q"):
                return form.attributes.get("action") or "", fields
        return None


def _text(node: LexborNode) -> str:
    return " ".join(node.text(deep=True).split())


def _unwrap_ddg_href(href: str) -> str | None:
    """DuckDuckGo links go through ``//duckduckgo.com/l/?uddg=<target>``; ads via ``/y.js``."""
    if href.startswith("//"):
        href = "https:" + href
    parts = urlsplit(href)
    host = (parts.hostname or "").lower()
    if host == "duckduckgo.com" or host.endswith(".duckduckgo.com"):
        if parts.path.startswith("/y.js"):
            return None
        target = parse_qs(parts.query).get("uddg")
        return target[0] if target else None
    if parts.scheme in ("http", "https"):
        return href
    return None


def _snippet(resp: httpx.Response, limit: int = 300) -> str:
    text = " ".join(resp.text.split())
    return (text[:limit] + "…") if len(text) > limit else (text or resp.reason_phrase)
