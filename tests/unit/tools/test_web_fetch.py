"""web_fetch against real HTTP servers on 127.0.0.1 (private network allowed for loopback)."""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.tools.base import RiskLevel, SubjectError, ToolCategory, ToolContext, ToolResult
from app.core.tools.builtin.web_fetch import WebFetchTool, create, url_host_subjects
from app.core.tools.default_registry import default_registry
from app.core.tools.web_content import classify, decode_body, html_to_markdown
from tests.fakes.web_server import FakeWebServer, LoopbackOnlyBackend, stub_resolver

MB = 1024 * 1024

PAGE = """<!DOCTYPE html><html><head><title>Widgets &amp; Co</title>
<style>body { color: red } .secret-css { display: none }</style>
<script>var secretScript = "SCRIPT-TEXT"; document.write('<p>injected</p>');</script>
</head><body>
<header><a href="/">Home</a> | <a href="/shop">Shop</a></header>
<nav class="menu"><ul><li><a href="/nav-one">NAV-ONE</a></li>
  <li><a href="/nav-two">NAV-TWO</a></li></ul></nav>
<main>
  <h1>Widget guide</h1>
  <p>Widgets are <strong>great</strong>. Read the <a href="/docs/widgets">widget docs</a>.</p>
  <noscript>NOSCRIPT-TEXT</noscript>
  <svg width="10" height="10"><text>SVG-TEXT</text></svg>
  <h2>Sizes</h2>
  <ul><li>small</li><li>large</li></ul>
  <pre><code>print("hello")</code></pre>
  <script>trackPageview("SCRIPT-IN-BODY")</script>
</main>
<footer>FOOTER-TEXT</footer>
</body></html>"""


@pytest.fixture
def server() -> Iterator[FakeWebServer]:
    with FakeWebServer() as srv:
        yield srv


@pytest.fixture
def backend() -> LoopbackOnlyBackend:
    return LoopbackOnlyBackend()


@pytest.fixture
async def tool(backend: LoopbackOnlyBackend):
    t = WebFetchTool(resolver=stub_resolver({"localhost": ["127.0.0.1"],
                                             "other.test": ["127.0.0.1"]}),
                     network_backend=backend)
    yield t
    await t.aclose()


def make_ctx(tmp_path: Path, *, timeout: float = 10.0, **config: Any) -> ToolContext:
    return ToolContext(project_root=tmp_path, allow_private_network=True, http_timeout_s=timeout,
                       tool_config={"web_fetch": config} if config else {})


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return make_ctx(tmp_path)


def payload(result: ToolResult) -> dict[str, Any]:
    return json.loads(result.content)


# -- spec and registry ----------------------------------------------------------------------

def test_spec_matches_design() -> None:
    spec = create().spec
    assert spec.name == "web_fetch"
    assert spec.category is ToolCategory.READ_ONLY
    assert spec.risk is RiskLevel.LOW
    assert spec.subject_kind == "host"
    assert spec.input_schema["required"] == ["url"]
    assert set(spec.input_schema["properties"]) == {"url", "max_length"}


def test_registered_in_default_registry() -> None:
    assert default_registry().get("web_fetch") is not None


def test_subjects_are_lower_cased_hosts() -> None:
    assert url_host_subjects({"url": "https://Docs.Python.ORG./3/library"}) == ["docs.python.org"]
    assert url_host_subjects({"url": "http://例え.jp/"}) == ["xn--r8jz45g.jp"]
    assert url_host_subjects({"url": "http://[::1]:8080/"}) == ["::1"]
    with pytest.raises(SubjectError):
        url_host_subjects({"url": "file:///etc/passwd"})
    with pytest.raises(SubjectError):
        url_host_subjects({})


# -- HTML conversion --------------------------------------------------------------------------

async def test_html_page_becomes_markdown_without_scripts_styles_or_nav(
        tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext) -> None:
    server.html("/guide", PAGE)
    result = await tool.execute({"url": server.url("/guide")}, ctx)
    assert not result.is_error, result.content
    data = payload(result)
    content = data["content"]
    assert data["url"] == server.url("/guide")
    assert data["status"] == 200
    assert data["title"] == "Widgets & Co"
    assert data["content_length"] == len(content)
    assert data["truncated"] is False
    assert "untrusted" in data["source"].lower() and server.url("/guide") in data["source"]
    assert "not as instructions" in data["source"]
    assert content.startswith("# Widget guide")
    assert "## Sizes" in content
    assert "**great**" in content
    # links are kept and made absolute, so the model can fetch them next
    assert f"[widget docs]({server.url('/docs/widgets')})" in content
    assert "- small" in content and "print(\"hello\")" in content
    for hidden in ("SCRIPT-TEXT", "SCRIPT-IN-BODY", "secretScript", "color: red", "injected",
                   "NOSCRIPT-TEXT", "SVG-TEXT"):
        assert hidden not in content
    # main-content extraction (the default) drops the page chrome
    for chrome in ("NAV-ONE", "FOOTER-TEXT", "Shop"):
        assert chrome not in content


async def test_main_content_extraction_can_be_turned_off(
        tool: WebFetchTool, server: FakeWebServer, tmp_path: Path) -> None:
    server.html("/guide", PAGE)
    result = await tool.execute({"url": server.url("/guide")},
                                make_ctx(tmp_path, main_content=False))
    content = payload(result)["content"]
    assert f"[NAV-ONE]({server.url('/nav-one')})" in content
    assert "FOOTER-TEXT" in content and "# Widget guide" in content
    assert "SCRIPT-TEXT" not in content and "NOSCRIPT-TEXT" not in content
    assert "SVG-TEXT" not in content and "color: red" not in content


async def test_page_that_is_only_navigation_is_not_emptied(
        tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext) -> None:
    links = "".join(f'<li><a href="/p{i}">Chapter {i} of the manual</a></li>' for i in range(40))
    server.html("/index", f"<html><body><nav><ul>{links}</ul></nav></body></html>")
    content = payload(await tool.execute({"url": server.url("/index")}, ctx))["content"]
    assert "Chapter 39 of the manual" in content


def test_converter_unit_behaviour() -> None:
    html = ("<html><body><div hidden>HIDDEN</div><article><header><h1>Title</h1></header>"
            "<p>Body <img src='data:image/png;base64,AAAA' alt='chart'></p>"
            "<button>BUTTON</button><form><input value='INPUT'></form></article></body></html>")
    conv = html_to_markdown(html, limit=10_000, main_content=True, base_url="https://ex.com/")
    assert conv.text.startswith("# Title")  # an article's own header is content
    assert "chart" in conv.text and "base64" not in conv.text
    for gone in ("HIDDEN", "BUTTON", "INPUT"):
        assert gone not in conv.text
    assert conv.total_chars == len(conv.text) and not conv.total_is_estimate


def test_converter_truncates_big_pages_with_an_estimated_total() -> None:
    section = "<section><h2>Part {i}</h2><p>" + "word " * 200 + "</p></section>"
    html = "<html><body><main>" + "".join(section.format(i=i) for i in range(2000)) + "</main>"
    conv = html_to_markdown(html, limit=5_000, main_content=True)
    assert len(conv.text) == 5_000 and conv.truncated and conv.total_is_estimate
    full = html_to_markdown(html, limit=10**9, main_content=True)
    assert not full.truncated and not full.total_is_estimate
    assert abs(conv.total_chars - full.total_chars) / full.total_chars < 0.15
    assert full.text.startswith(conv.text)


async def test_truncation_is_marked_with_the_total_length(
        tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext) -> None:
    server.html("/long", "<html><body><main>" + "<p>lorem ipsum dolor</p>" * 400 + "</main>")
    data = payload(await tool.execute({"url": server.url("/long"), "max_length": 1000}, ctx))
    assert data["truncated"] is True
    assert data["total_length"] > 1000
    assert data["content_length"] == len(data["content"])
    assert f"[Truncated: showing the first 1,000 of {data['total_length']:,} characters" \
        in data["content"]


async def test_max_length_is_capped_at_100000(
        tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext) -> None:
    server.add("/t", body="x" * 150_000, content_type="text/plain")
    data = payload(await tool.execute({"url": server.url("/t"), "max_length": 500_000}, ctx))
    assert data["content"].startswith("x" * 100_000)
    assert "[Truncated: showing the first 100,000 of 150,000 characters" in data["content"]
    assert any("lowered" in note for note in data["notes"])


# -- size, time, redirects ------------------------------------------------------------------

async def test_twenty_megabyte_page_is_capped_fast_and_memory_bounded(
        tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext) -> None:
    server.stream("/huge", 20 * MB)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        result = await tool.execute({"url": server.url("/huge")}, ctx)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    elapsed = time.perf_counter() - started
    data = payload(result)
    assert not result.is_error
    assert data["body_truncated_at_bytes"] == 5 * MB
    assert any("larger than 5,242,880 bytes" in note for note in data["notes"])
    assert data["truncated"] and data["content_length"] <= 50_000 + 300
    assert elapsed < 15, elapsed  # generous: a shared 2-core machine; typically well under 1 s
    assert peak < 60 * MB, peak   # 5 MB body + its text + parse tree, never the 20 MB
    assert server.bytes_sent["/huge"] < 20 * MB  # we hung up instead of reading it all


async def test_slow_server_times_out(tool: WebFetchTool, server: FakeWebServer,
                                     tmp_path: Path) -> None:
    server.html("/slow", "<p>late</p>", delay_s=30)
    started = time.perf_counter()
    result = await tool.execute({"url": server.url("/slow")}, make_ctx(tmp_path, timeout=0.5))
    assert result.is_error
    assert "Timed out" in result.content and "0.5 s" in result.content
    assert time.perf_counter() - started < 10


async def test_trickling_body_hits_the_overall_deadline(
        tool: WebFetchTool, server: FakeWebServer, tmp_path: Path) -> None:
    # Each chunk arrives well inside a per-read timeout; only a whole-fetch deadline stops it.
    server.stream("/drip", 10 * MB, chunk=b"<p>drip</p>", chunk_delay_s=0.1)
    started = time.perf_counter()
    result = await tool.execute({"url": server.url("/drip")}, make_ctx(tmp_path, timeout=1.0))
    assert result.is_error and "Timed out" in result.content
    assert time.perf_counter() - started < 10


async def test_redirect_loop_is_reported(tool: WebFetchTool, server: FakeWebServer,
                                         ctx: ToolContext) -> None:
    server.redirect("/a", "/b")
    server.redirect("/b", server.url("/a"))
    result = await tool.execute({"url": server.url("/a")}, ctx)
    assert result.is_error
    assert "Redirect loop" in result.content and server.url("/b") in result.content
    assert len(server.hits("/a")) == 1 and len(server.hits("/b")) == 1


async def test_too_many_redirects(tool: WebFetchTool, server: FakeWebServer,
                                  ctx: ToolContext) -> None:
    for i in range(12):
        server.redirect(f"/r{i}", f"/r{i + 1}", status=301 if i % 2 else 307)
    server.html("/r12", "<p>end</p>")
    result = await tool.execute({"url": server.url("/r0")}, ctx)
    assert result.is_error and "Too many redirects (more than 10)" in result.content
    assert len(server.requests) == 11  # the original request and 10 hops
    assert not server.hits("/r12")


async def test_same_host_redirect_is_followed_and_reported(
        tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext) -> None:
    server.redirect("/old", "/new?x=1", status=301)
    server.html("/new", "<html><body><h1>New home</h1></body></html>")
    data = payload(await tool.execute({"url": server.url("/old")}, ctx))
    assert data["url"] == server.url("/new?x=1")
    assert data["requested_url"] == server.url("/old")
    assert data["redirects"] == [server.url("/new?x=1")]
    assert "# New home" in data["content"]


async def test_cross_host_redirect_is_reported_not_followed(
        tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext, tmp_path: Path) -> None:
    target = server.url("/landing", host="other.test")
    server.redirect("/go", target)
    server.html("/landing", "<h1>Landing</h1>")
    result = await tool.execute({"url": server.url("/go")}, ctx)
    data = payload(result)
    assert not result.is_error
    assert data["redirect_url"] == target and data["status"] == 302
    assert "call web_fetch again" in data["content"]
    assert not server.hits("/landing")
    # ...unless the configuration says to follow them
    result = await tool.execute({"url": server.url("/go")},
                                make_ctx(tmp_path, follow_cross_host_redirects=True))
    assert "# Landing" in payload(result)["content"]


# -- content types and charsets ---------------------------------------------------------------

@pytest.mark.parametrize(("content_type", "body"), [
    ("text/plain; charset=utf-8", "plain <b>not html</b>\n  indented\n"),
    ("application/json", '{"a": [1, 2], "html": "<p>x</p>"}'),
    ("text/markdown", "# Title\n\n* item <span>kept</span>\n"),
    ("application/problem+json", '{"title": "nope"}'),
])
async def test_text_types_pass_through_unchanged(
        tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext,
        content_type: str, body: str) -> None:
    server.add("/doc", body=body, content_type=content_type)
    data = payload(await tool.execute({"url": server.url("/doc")}, ctx))
    assert data["content"] == body
    assert data["content_type"] == content_type.split(";")[0]


@pytest.mark.parametrize(("content_type", "body"), [
    ("image/png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 2000),
    ("application/pdf", b"%PDF-1.7\n" + b"\x00\xff" * 1000),
    ("application/octet-stream", b"\x00\x01\x02\x03" * 1000),
    (None, b"PK\x03\x04" + b"\x00" * 100),
])
async def test_binary_types_are_refused(
        tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext,
        content_type: str | None, body: bytes) -> None:
    server.add("/file", body=body, content_type=content_type)
    result = await tool.execute({"url": server.url("/file")}, ctx)
    assert result.is_error
    assert "not a text page" in result.content
    assert "HTML, text, Markdown and JSON" in result.content


async def test_untyped_html_is_sniffed(tool: WebFetchTool, server: FakeWebServer,
                                       ctx: ToolContext) -> None:
    server.add("/x", body="<!DOCTYPE html><html><body><h1>Sniffed</h1></body></html>",
               content_type=None)
    assert "# Sniffed" in payload(await tool.execute({"url": server.url("/x")}, ctx))["content"]


async def test_gzip_encoded_body(tool: WebFetchTool, server: FakeWebServer,
                                 ctx: ToolContext) -> None:
    server.add("/gz", body=gzip.compress(b"<html><body><h1>Zipped</h1></body></html>"),
               headers={"Content-Encoding": "gzip"})
    assert "# Zipped" in payload(await tool.execute({"url": server.url("/gz")}, ctx))["content"]


@pytest.mark.parametrize(("content_type", "body", "expected", "note"), [
    ("text/html; charset=iso-8859-1", "<p>café déjà</p>".encode("latin-1"), "café déjà", None),
    ("text/html", '<meta charset="shift_jis"><p>日本語のページ</p>'.encode("shift_jis"),
     "日本語のページ", None),
    ("text/html", '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
                  "<p>Привет</p>".encode("cp1251"), "Привет", None),
    ("text/html; charset=bogus-xyz", "<p>naïve</p>".encode(), "naïve", "unknown charset"),
    ("text/html", "<p>caf\xe9 ol\xe9</p>".encode("cp1252"), "café olé", "not UTF-8"),
    ("text/plain; charset=utf-8", b"ok \xff\xfe bad", "ok \ufffd\ufffd bad", "not valid utf-8"),
    ("text/plain", "\ufeffwith BOM".encode("utf-8"), "with BOM", None),
])
async def test_charsets(tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext,
                        content_type: str, body: bytes, expected: str, note: str | None) -> None:
    server.add("/c", body=body, content_type=content_type)
    result = await tool.execute({"url": server.url("/c")}, ctx)
    assert not result.is_error, result.content
    data = payload(result)
    assert expected in data["content"]
    if note:
        assert any(note in n for n in data["notes"]), data.get("notes")


def test_classify_and_decode_units() -> None:
    assert classify("text/html", b"") == "html"
    assert classify("application/xhtml+xml", b"") == "html"
    assert classify("image/svg+xml", b"") == "text"  # XML text, not a raster image
    assert classify("video/mp4", b"") == "binary"
    assert classify("", b"\x00\x00\x00") == "binary"
    assert classify("", "héllo wörld".encode()) == "text"
    assert decode_body(b"\xff\xfeh\x00i\x00", None, "text").text == "hi"  # UTF-16 BOM


# -- errors -----------------------------------------------------------------------------------

async def test_http_error_status_is_an_error_with_the_page(
        tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext) -> None:
    result = await tool.execute({"url": server.url("/nope")}, ctx)
    assert result.is_error
    data = payload(result)
    assert data["status"] == 404 and "HTTP 404" in data["error"]
    assert "does not exist" in data["error"] and "Not found" in data["content"]


async def test_connection_refused(tool: WebFetchTool, tmp_path: Path) -> None:
    with FakeWebServer() as srv:
        url = srv.url("/gone")
    result = await tool.execute({"url": url}, make_ctx(tmp_path, timeout=5))
    assert result.is_error and "Could not connect" in result.content


@pytest.mark.parametrize("bad", [{"url": ""}, {"url": 42}, {"url": "https://x.test",
                                                              "max_length": 0}])
async def test_bad_input(tool: WebFetchTool, ctx: ToolContext, bad: dict[str, Any]) -> None:
    result = await tool.execute(bad, ctx)
    assert result.is_error


async def test_shared_client_is_reused_and_closable(
        tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext) -> None:
    server.html("/p", "<p>x</p>")
    await tool.execute({"url": server.url("/p")}, ctx)
    first = tool._clients[True]
    await tool.execute({"url": server.url("/p")}, ctx)
    assert tool._clients[True] is first
    await tool.aclose()
    assert first.is_closed and tool._clients == {}
    assert not (await tool.execute({"url": server.url("/p")}, ctx)).is_error  # re-created


def test_deeply_nested_markup_is_not_fed_to_the_quadratic_parser() -> None:
    # 200,000 nested <div>s would keep an HTML5 tree builder busy for many minutes.
    html = "<html><body><h1>Top</h1>" + "<div><section>" * 100_000 + "deep" + "</p>"
    started = time.perf_counter()
    conv = html_to_markdown(html, limit=10_000, main_content=True)
    assert time.perf_counter() - started < 5
    assert conv.text.startswith("# Top")
    assert any("levels deep" in note for note in conv.notes)


def test_ordinary_nesting_keeps_main_content_extraction() -> None:
    html = ("<html><body><nav><a href='/x'>NAVLINK</a></nav><main>" + "<div>" * 300 +
            "<p>" + "inner text " * 30 + "</p>" + "</div>" * 300 + "</main></body></html>")
    conv = html_to_markdown(html, limit=10_000, main_content=True)
    assert "inner text" in conv.text and "NAVLINK" not in conv.text and not conv.notes


async def test_hostile_nesting_over_http_returns_promptly(
        tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext) -> None:
    server.html("/deep", "<h1>Deep</h1>" + "<blockquote>" * 150_000)
    started = time.perf_counter()
    data = payload(await tool.execute({"url": server.url("/deep")}, ctx))
    assert time.perf_counter() - started < 10
    assert "Deep" in data["content"]
    assert any("levels deep" in note for note in data["notes"])


async def test_fetches_are_stateless(tool: WebFetchTool, server: FakeWebServer,
                                     ctx: ToolContext) -> None:
    server.add("/set", body="<p>hi</p>", headers={"Set-Cookie": "session=abc; Path=/"})
    server.html("/next", "<p>again</p>")
    await tool.execute({"url": server.url("/set")}, ctx)
    await tool.execute({"url": server.url("/next")}, ctx)
    assert "cookie" not in server.hits("/next")[0].headers
    assert server.hits("/next")[0].headers["user-agent"].startswith("Tebiki/")


async def test_through_the_registry(server: FakeWebServer, ctx: ToolContext) -> None:
    registry = default_registry()
    server.html("/r", "<html><body><h1>Via registry</h1></body></html>")
    tool = registry.get("web_fetch")
    try:
        result = await registry.execute("web_fetch", {"url": server.url("/r")}, ctx)
        assert "# Via registry" in payload(result)["content"]
        bad = await registry.execute("web_fetch", {"url": server.url("/r"), "max_length": 0}, ctx)
        assert bad.is_error and "max_length" in bad.content
    finally:
        await tool.aclose()  # type: ignore[union-attr]


# -- malformed URLs and redirect locations ----------------------------------------------------

def _header_value(text: str) -> str:
    """``text`` as the server will put it on the wire: UTF-8 bytes (BaseHTTPRequestHandler
    writes header values as latin-1, so this sends exactly the UTF-8 encoding)."""
    return text.encode("utf-8", "surrogatepass").decode("latin-1")


MALFORMED_LOCATIONS = [
    "http:\\\\host/x",
    "http:\\host/x",
    "https:\\\\127.0.0.1\\x",
    "/a\\b",
    "http://h:99999/",
    "http://h:-1/",
    "http://h:port/",
    "http://[::1/",
    "http://[zz]/",
    "http://[::1]:70000/",
    "http://:80/x",
    "http://@/x",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "data:text/html,<p>x</p>",
    "ftp://127.0.0.1/x",
    "http://a b/",
    "http://a\tb/",
    "/path with space",
    "http://" + "a" * 70 + ".test/",
    "http://127.0.0.1/" + "a" * 9000,
    _header_value("http://\u200b/"),
    _header_value("http://a\u3000b.test/"),
    _header_value("http://xn--a.test/"),
    _header_value("http://\U0001f600\u0301.test/"),
    _header_value("http://127.0.0.1/\x85x"),
    "http:///x",
]


@pytest.mark.parametrize("location", MALFORMED_LOCATIONS,
                         ids=[f"loc{i}" for i in range(len(MALFORMED_LOCATIONS))])
async def test_malformed_redirect_location_is_an_error_result(
        tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext, location: str) -> None:
    server.redirect("/jump", location)
    result = await tool.execute({"url": server.url("/jump")}, ctx)

    assert isinstance(result, ToolResult)
    assert result.is_error, result.content
    assert "redirect" in result.content.lower()
    assert server.url("/jump") in result.content  # names the page that redirected
    assert len(server.requests) == 1  # nothing was requested from the bad location


MALFORMED_URLS = [
    "http:\\\\host/x",
    "http://h:99999/",
    "http://h:-1/",
    "http://h:port/",
    "http://[::1/",
    "http://[zz]/",
    "http://:80/x",
    "http:///x",
    "http://",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "http://a b/",
    "http://a\x00b/",
    "http://\x7f/",
    "http://h/" + "a" * 100_000,
    "http://\u200b/",
    "http://a\u3000b.test/",
    "http://xn--a.test/",
    "http://host.test/\udcff",
    "\ud800",
    "//host/x",
    "host.test",
]


@pytest.mark.parametrize("url", MALFORMED_URLS, ids=[f"url{i}" for i in range(len(MALFORMED_URLS))])
async def test_malformed_url_input_is_an_error_result(tool: WebFetchTool, ctx: ToolContext,
                                                      backend: LoopbackOnlyBackend,
                                                      url: str) -> None:
    result = await tool.execute({"url": url}, ctx)
    assert isinstance(result, ToolResult) and result.is_error, result.content
    assert backend.attempts == []
    result.content.encode("utf-8")  # the message itself is storable text


# Random text rarely looks like a URL; these starts put it where URL parsers branch.
_URL_PREFIXES = st.sampled_from(["", "/", "//", "http:", "http://", "https://", "http://[",
                                 "http://h:", "http:\\", "HTTP://x.test", "xn--", "?", "#"])


@settings(derandomize=True, max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=_URL_PREFIXES, rest=st.text(max_size=300))
async def test_any_text_as_the_url_is_a_result(tool: WebFetchTool, ctx: ToolContext,
                                               prefix: str, rest: str) -> None:
    result = await tool.execute({"url": prefix + rest}, ctx)
    assert isinstance(result, ToolResult)
    result.content.encode("utf-8")


@settings(derandomize=True, max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=_URL_PREFIXES,
       rest=st.text(st.characters(exclude_characters="\r\n"), max_size=200))
async def test_any_text_as_a_redirect_location_is_a_result(
        tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext, prefix: str,
        rest: str) -> None:
    location = (prefix + rest).strip() or "/"
    server.redirect("/any", _header_value(location))
    server.html("/", "<p>root</p>")
    result = await tool.execute({"url": server.url("/any")}, ctx)
    assert isinstance(result, ToolResult)
    result.content.encode("utf-8")


async def test_the_messages_say_what_is_wrong(tool: WebFetchTool, server: FakeWebServer,
                                              ctx: ToolContext) -> None:
    server.redirect("/bs", "http:\\\\host/x")
    server.redirect("/js", "javascript:alert(1)")
    server.redirect("/port", "http://h:99999/")
    backslash = (await tool.execute({"url": server.url("/bs")}, ctx)).content
    assert "malformed location 'http:\\\\\\\\host/x'" in backslash and "backslash" in backslash
    assert "Only http:// and https://" in (await tool.execute({"url": server.url("/js")},
                                                               ctx)).content
    assert "99999" in (await tool.execute({"url": server.url("/port")}, ctx)).content
    own = await tool.execute({"url": "http://a b.test/"}, ctx)
    assert own.content.startswith("The URL 'http://a b.test/' is malformed") or \
        "spaces" in own.content
