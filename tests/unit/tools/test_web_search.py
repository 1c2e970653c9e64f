"""web_search against loopback servers that speak Brave's API and DuckDuckGo's HTML."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import keyring
import keyring.errors
import pytest

from app.core.tools.base import RiskLevel, ToolCategory, ToolContext, ToolResult
from app.core.tools.builtin.web_search import WebSearchTool, create
from app.core.tools.default_registry import default_registry
from tests.fakes.web_server import FakeWebServer

BRAVE_PATH = "/res/v1/web/search"
DDG_PATH = "/html/"


def brave_body(n: int) -> str:
    return json.dumps({
        "type": "search",
        "query": {"original": "python asyncio"},
        "web": {"type": "search", "results": [
            {"title": f"Result <strong>{i}</strong> &amp; more", "url": f"https://site{i}.example/a",
             "description": f"About <strong>asyncio</strong> number {i}.", "age": "2 days ago",
             "language": "en", "profile": {"name": f"site{i}"}}
            for i in range(n)
        ]},
    })


def ddg_result(i: int, *, ad: bool = False) -> str:
    target = f"https://docs{i}.example/page?x=1&y=2"
    href = ("//duckduckgo.com/y.js?ad_domain=ads.example&u3=x" if ad
            else f"//duckduckgo.com/l/?uddg={quote(target, safe='')}&amp;rut=abc{i}")
    cls = "result results_links results_links_deep result--ad" if ad else \
        "result results_links results_links_deep web-result"
    return f"""
<div class="{cls} ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title">
      <a rel="nofollow" class="result__a" href="{href}">Doc <b>{i}</b> title</a>
    </h2>
    <div class="result__extras"><div class="result__extras__url">
      <a class="result__url" href="{href}">docs{i}.example/page</a></div></div>
    <a class="result__snippet" href="{href}">Snippet for <b>result</b> {i}.</a>
    <div class="clear"></div>
  </div>
</div>"""


def ddg_page(indices: range, *, next_s: int | None = None, ad: bool = True) -> str:
    results = (ddg_result(999, ad=True) if ad else "") + "".join(ddg_result(i) for i in indices)
    nav = ""
    if next_s is not None:
        nav = f"""<div class="nav-link"><form action="/html/" method="post">
  <input type="submit" class="btn btn--alt" value="Next" />
  <input type="hidden" name="q" value="python asyncio" />
  <input type="hidden" name="s" value="{next_s}" />
  <input type="hidden" name="nextParams" value="" />
  <input type="hidden" name="v" value="l" />
  <input type="hidden" name="o" value="json" />
  <input type="hidden" name="dc" value="{next_s + 1}" />
  <input type="hidden" name="api" value="d.js" />
  <input type="hidden" name="vqd" value="4-123456789" />
</form></div>"""
    return f"""<!DOCTYPE html><html><head><title>python asyncio at DuckDuckGo</title></head>
<body><div id="links" class="results">{results}{nav}</div></body></html>"""


@pytest.fixture
def server() -> Iterator[FakeWebServer]:
    with FakeWebServer() as srv:
        yield srv


@pytest.fixture
async def tool():
    t = WebSearchTool()
    yield t
    await t.aclose()


@pytest.fixture(autouse=True)
def no_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the real OS keyring from tests."""
    monkeypatch.setattr(keyring, "get_password", lambda service, name: None)


def make_ctx(tmp_path: Path, server: FakeWebServer, provider: str = "auto",
             timeout: float = 10.0) -> ToolContext:
    config = {"provider": provider, "brave_endpoint": server.url(BRAVE_PATH),
              "duckduckgo_endpoint": server.url(DDG_PATH)}
    return ToolContext(project_root=tmp_path, http_timeout_s=timeout,
                       tool_config={"web_search": config})


def payload(result: ToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    return json.loads(result.content)


def test_spec() -> None:
    spec = create().spec
    assert spec.name == "web_search"
    assert spec.category is ToolCategory.READ_ONLY and spec.risk is RiskLevel.LOW
    assert spec.subjects({"query": "rust async"}) == ["rust async"]
    assert default_registry().get("web_search") is not None


# -- Brave ------------------------------------------------------------------------------------

async def test_brave_results(tool: WebSearchTool, server: FakeWebServer, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "env-key")
    server.add(BRAVE_PATH, body=brave_body(8), content_type="application/json")
    data = payload(await tool.execute({"query": "python  asyncio", "num_results": 3},
                                      make_ctx(tmp_path, server, "brave")))
    assert data["provider"] == "brave" and data["query"] == "python asyncio"
    assert data["num_results"] == 3
    assert data["results"][0] == {"title": "Result 0 & more", "url": "https://site0.example/a",
                                  "description": "About asyncio number 0."}
    assert "untrusted" in data["source"]
    (req,) = server.hits(BRAVE_PATH)
    assert req.headers["x-subscription-token"] == "env-key"
    assert req.headers["accept"] == "application/json"
    assert req.query == {"q": ["python asyncio"], "count": ["3"]}


async def test_auto_prefers_brave_when_a_key_exists(
        tool: WebSearchTool, server: FakeWebServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyring, "get_password",
                        lambda service, name: "kr-key" if (service, name) == (
                            "tebiki", "brave_search_api_key") else None)
    server.add(BRAVE_PATH, body=brave_body(2), content_type="application/json")
    data = payload(await tool.execute({"query": "q"}, make_ctx(tmp_path, server)))
    assert data["provider"] == "brave"
    assert server.hits(BRAVE_PATH)[0].headers["x-subscription-token"] == "kr-key"
    # The environment is the explicit override and wins over the keyring (app.core.secrets).
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "env-key")
    await tool.execute({"query": "q"}, make_ctx(tmp_path, server))
    assert server.hits(BRAVE_PATH)[1].headers["x-subscription-token"] == "env-key"


async def test_keyring_errors_fall_back_to_the_environment(
        tool: WebSearchTool, server: FakeWebServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(service: str, name: str) -> str:
        raise keyring.errors.KeyringError("no backend (D-Bus unavailable)")

    monkeypatch.setattr(keyring, "get_password", broken)
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "env-key")
    server.add(BRAVE_PATH, body=brave_body(1), content_type="application/json")
    data = payload(await tool.execute({"query": "q"}, make_ctx(tmp_path, server, "brave")))
    assert data["num_results"] == 1
    assert server.hits(BRAVE_PATH)[0].headers["x-subscription-token"] == "env-key"


async def test_brave_without_a_key_names_the_fix(tool: WebSearchTool, server: FakeWebServer,
                                                 tmp_path: Path) -> None:
    result = await tool.execute({"query": "q"}, make_ctx(tmp_path, server, "brave"))
    assert result.is_error
    for fix in ("keyring", "brave_search_api_key", "BRAVE_SEARCH_API_KEY", "duckduckgo"):
        assert fix in result.content
    assert server.requests == []


@pytest.mark.parametrize(("status", "headers", "expected"), [
    (401, {}, "rejected the API key (HTTP 401)"),
    (403, {}, "rejected the API key (HTTP 403)"),
    (429, {"Retry-After": "30"}, "rate limit reached (HTTP 429) (the server asks to wait 30 s)"),
    (422, {}, "refused the query (HTTP 422)"),
    (503, {}, "Brave Search failed (HTTP 503)"),
])
async def test_brave_http_errors(tool: WebSearchTool, server: FakeWebServer, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch, status: int,
                                 headers: dict[str, str], expected: str) -> None:
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "bad-key")
    server.add(BRAVE_PATH, status=status, headers=headers, content_type="application/json",
               body='{"type": "ErrorResponse", "error": {"code": "X", "detail": "nope"}}')
    result = await tool.execute({"query": "q"}, make_ctx(tmp_path, server, "brave"))
    assert result.is_error
    assert expected in result.content, result.content
    if status in (401, 403):
        assert "BRAVE_SEARCH_API_KEY" in result.content and "keyring" in result.content


async def test_brave_non_json_and_empty(tool: WebSearchTool, server: FakeWebServer,
                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "k")
    server.add(BRAVE_PATH, body="<html>proxy login</html>", content_type="text/html")
    result = await tool.execute({"query": "q"}, make_ctx(tmp_path, server, "brave"))
    assert result.is_error and "not JSON" in result.content
    server.add(BRAVE_PATH, body='{"type": "search"}', content_type="application/json")
    data = payload(await tool.execute({"query": "q"}, make_ctx(tmp_path, server, "brave")))
    assert data["results"] == [] and "No results" in data["notes"][0]


async def test_num_results_is_capped_at_20(tool: WebSearchTool, server: FakeWebServer,
                                           tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "k")
    server.add(BRAVE_PATH, body=brave_body(25), content_type="application/json")
    data = payload(await tool.execute({"query": "q", "num_results": 50},
                                      make_ctx(tmp_path, server, "brave")))
    assert data["num_results"] == 20
    assert server.hits(BRAVE_PATH)[0].query["count"] == ["20"]
    assert "lowered" in data["notes"][0]


# -- DuckDuckGo -------------------------------------------------------------------------------

async def test_duckduckgo_results(tool: WebSearchTool, server: FakeWebServer,
                                  tmp_path: Path) -> None:
    server.html(DDG_PATH, ddg_page(range(10), next_s=10))
    data = payload(await tool.execute({"query": "python asyncio"},
                                      make_ctx(tmp_path, server, "duckduckgo")))
    assert data["provider"] == "duckduckgo"
    assert data["num_results"] == 5
    assert data["results"][0] == {"title": "Doc 0 title",
                                  "url": "https://docs0.example/page?x=1&y=2",
                                  "description": "Snippet for result 0."}
    assert all("duckduckgo.com" not in r["url"] for r in data["results"])  # ads skipped
    (req,) = server.hits(DDG_PATH)
    assert req.method == "POST" and req.form["q"] == ["python asyncio"]


async def test_duckduckgo_follows_the_next_page_form(tool: WebSearchTool, server: FakeWebServer,
                                                     tmp_path: Path) -> None:
    pages = {"": ddg_page(range(10), next_s=10), "10": ddg_page(range(10, 20), next_s=20)}
    server.add(DDG_PATH, body=lambda req: [pages[req.form.get("s", [""])[0]].encode()])
    data = payload(await tool.execute({"query": "python asyncio", "num_results": 15},
                                      make_ctx(tmp_path, server, "duckduckgo")))
    assert [r["url"] for r in data["results"]] == [
        f"https://docs{i}.example/page?x=1&y=2" for i in range(15)]
    second = server.hits(DDG_PATH)[1]
    assert second.form["s"] == ["10"] and second.form["vqd"] == ["4-123456789"]


async def test_auto_uses_duckduckgo_without_a_key(tool: WebSearchTool, server: FakeWebServer,
                                                  tmp_path: Path) -> None:
    server.html(DDG_PATH, ddg_page(range(3), ad=False))
    data = payload(await tool.execute({"query": "q"}, make_ctx(tmp_path, server)))
    assert data["provider"] == "duckduckgo" and data["num_results"] == 3


async def test_duckduckgo_no_results(tool: WebSearchTool, server: FakeWebServer,
                                     tmp_path: Path) -> None:
    server.html(DDG_PATH, '<html><body><div class="no-results">No results.</div></body></html>')
    data = payload(await tool.execute({"query": "zzqqxx"},
                                      make_ctx(tmp_path, server, "duckduckgo")))
    assert data["results"] == [] and "No results" in data["notes"][0]


@pytest.mark.parametrize(("status", "body", "expected"), [
    (202, '<html><body><div class="anomaly-modal">Unfortunately, bots…</div></body></html>',
     "rate-limiting this computer (HTTP 202)"),
    (200, '<html><body><form id="challenge-form" action="/anomaly.js"></form></body></html>',
     "bot check (CAPTCHA)"),
    (429, "slow down", "rate-limiting this computer (HTTP 429)"),
    (500, "oops", "DuckDuckGo search failed (HTTP 500)"),
])
async def test_duckduckgo_errors_name_the_fix(tool: WebSearchTool, server: FakeWebServer,
                                              tmp_path: Path, status: int, body: str,
                                              expected: str) -> None:
    server.add(DDG_PATH, status=status, body=body)
    result = await tool.execute({"query": "q"}, make_ctx(tmp_path, server, "duckduckgo"))
    assert result.is_error and expected in result.content, result.content
    if status != 500:
        assert "Brave" in result.content and "Wait" in result.content


# -- input and failures -----------------------------------------------------------------------

@pytest.mark.parametrize(("bad", "expected"), [
    ({"query": "   "}, "Missing 'query'"),
    ({"query": "x" * 500}, "keep it under 400"),
    ({"query": "q", "num_results": 0}, "num_results: must be at least 1 (got 0)"),
])
async def test_bad_input(tool: WebSearchTool, server: FakeWebServer, tmp_path: Path,
                         bad: dict[str, Any], expected: str) -> None:
    result = await tool.execute(bad, make_ctx(tmp_path, server))
    assert result.is_error and expected in result.content


async def test_unknown_provider(tool: WebSearchTool, server: FakeWebServer,
                                tmp_path: Path) -> None:
    result = await tool.execute({"query": "q"}, make_ctx(tmp_path, server, "bing"))
    assert result.is_error and "Unknown web_search provider 'bing'" in result.content


async def test_slow_provider_times_out(tool: WebSearchTool, server: FakeWebServer,
                                       tmp_path: Path) -> None:
    server.html(DDG_PATH, ddg_page(range(3)), delay_s=30)
    result = await tool.execute({"query": "q"},
                                make_ctx(tmp_path, server, "duckduckgo", timeout=0.5))
    assert result.is_error and "timed out" in result.content
