"""web_fetch must not be turned against the local machine or private networks (SSRF).

Private access is OFF here unless a test says otherwise. Every test tool connects through
``LoopbackOnlyBackend`` and a stub resolver, so even a broken guard cannot send a packet off this
machine or make a real DNS query. "public.test" is a fake public name: the stub resolver maps it
to 127.0.0.1 and the address filter treats exactly that name as public, which lets a real
loopback server play an allowed internet host while every other address keeps the real checks.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.tools.base import ToolContext
from app.core.tools.builtin.web_fetch import WebFetchTool
from app.core.tools.net_guard import BlockedURLError, NetGuard, blocked_reason
from tests.fakes.web_server import FakeWebServer, LoopbackOnlyBackend, stub_resolver

PUBLIC_NAME = "public.test"
DOC_IP = "93.184.215.14"  # a public address; the test backend refuses to connect to it


def public_test_filter(host: str, ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    return None if host == PUBLIC_NAME else blocked_reason(ip)


@pytest.fixture
def server() -> Iterator[FakeWebServer]:
    with FakeWebServer() as srv:
        yield srv


@pytest.fixture
def backend() -> LoopbackOnlyBackend:
    return LoopbackOnlyBackend()


@pytest.fixture
def resolver():
    return stub_resolver({
        PUBLIC_NAME: ["127.0.0.1"],
        "localhost": ["127.0.0.1"],
        "internal.test": ["10.1.2.3"],
        "mixed.test": [DOC_IP, "127.0.0.1"],
        "metadata.test": ["169.254.169.254"],
        "mapped.test": ["::ffff:127.0.0.1"],
    })


@pytest.fixture
async def tool(resolver, backend: LoopbackOnlyBackend):
    t = WebFetchTool(resolver=resolver, address_filter=public_test_filter,
                     network_backend=backend)
    yield t
    await t.aclose()


def make_ctx(tmp_path: Path, *, private: bool = False, **config: object) -> ToolContext:
    return ToolContext(project_root=tmp_path, allow_private_network=private, http_timeout_s=10,
                       tool_config={"web_fetch": config} if config else {})


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return make_ctx(tmp_path)


# -- literal addresses and spellings ----------------------------------------------------------

@pytest.mark.parametrize("url", [
    "http://127.0.0.1:{port}/secret",
    "http://127.0.0.2:{port}/secret",
    "http://[::1]:{port}/secret",
    "http://[::ffff:127.0.0.1]:{port}/secret",
    "http://[::ffff:7f00:1]:{port}/secret",
    "http://[0:0:0:0:0:ffff:127.0.0.1]:{port}/secret",
    "http://[64:ff9b::7f00:1]:{port}/secret",    # NAT64 of 127.0.0.1
    "http://[2002:7f00:1::]:{port}/secret",       # 6to4 of 127.0.0.1
    "http://0.0.0.0:{port}/secret",
    "http://[::]:{port}/secret",
    "http://localhost:{port}/secret",
    "http://LOCALHOST.:{port}/secret",
    "http://api.localhost:{port}/secret",
    "http://127。0。0。1:{port}/secret",             # ideographic full stops, IDNA-mapped
])
async def test_loopback_is_refused(tool: WebFetchTool, server: FakeWebServer, ctx: ToolContext,
                                   backend: LoopbackOnlyBackend, url: str) -> None:
    server.html("/secret", "<p>TOP SECRET</p>")
    result = await tool.execute({"url": url.format(port=server.port)}, ctx)
    assert result.is_error, result.content
    assert "Refused" in result.content and "Allow private network" in result.content
    assert "TOP SECRET" not in result.content
    assert server.requests == [] and backend.attempts == []


@pytest.mark.parametrize("host", [
    "2130706433",        # decimal 127.0.0.1
    "0x7f000001",        # hex
    "0x7f.0.0.1",
    "0177.0.0.1",        # octal
    "017700000001",
    "127.1",             # short form
    "0",
    "127.0.0.1.",        # canonical with a trailing dot is fine to refuse as loopback too
])
async def test_numeric_ip_spellings_are_refused(tool: WebFetchTool, server: FakeWebServer,
                                                ctx: ToolContext, backend: LoopbackOnlyBackend,
                                                host: str) -> None:
    result = await tool.execute({"url": f"http://{host}:{server.port}/"}, ctx)
    assert result.is_error
    assert any(why in result.content for why in ("non-standard notation", "loopback",
                                                 "could not be parsed")), result.content
    assert server.requests == [] and backend.attempts == []


@pytest.mark.parametrize("host", ["0x8.0x8.0x8.0x8", "0x08080808", "134744072"])
async def test_numeric_spellings_are_refused_even_when_private_is_allowed(
        tool: WebFetchTool, tmp_path: Path, backend: LoopbackOnlyBackend, host: str) -> None:
    result = await tool.execute({"url": f"http://{host}/"}, make_ctx(tmp_path, private=True))
    assert result.is_error and backend.attempts == []


@pytest.mark.parametrize("address", [
    "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1", "192.0.0.8",
    "198.18.0.1", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
    "[fe80::1]", "[fc00::1]", "[fd12:3456::1]", "[fec0::1]", "[ff02::1]", "[2001:db8::1]",
    "[::ffff:10.0.0.1]", "[::ffff:169.254.169.254]", "[64:ff9b::a9fe:a9fe]", "[2002:a00:1::]",
    "[64:ff9b:1::1]", "[100::1]", "[::a00:1]",
])
async def test_private_and_special_addresses_are_refused(
        tool: WebFetchTool, ctx: ToolContext, backend: LoopbackOnlyBackend, address: str) -> None:
    result = await tool.execute({"url": f"http://{address}/latest/meta-data/"}, ctx)
    assert result.is_error and "Refused" in result.content
    assert backend.attempts == []


def test_blocked_reason_allows_public_addresses() -> None:
    for public in (DOC_IP, "1.1.1.1", "2606:4700:4700::1111", "::ffff:93.184.215.14",
                   "64:ff9b::5db8:d70e"):
        assert blocked_reason(ipaddress.ip_address(public)) is None, public


# -- DNS ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["internal.test", "metadata.test", "mapped.test", "mixed.test"])
async def test_names_resolving_to_private_addresses_are_refused(
        tool: WebFetchTool, ctx: ToolContext, backend: LoopbackOnlyBackend, name: str) -> None:
    result = await tool.execute({"url": f"http://{name}/"}, ctx)
    assert result.is_error and "Refused" in result.content, result.content
    assert backend.attempts == []  # refused before any socket was opened


async def test_dns_rebinding_cannot_swap_the_checked_address(
        backend: LoopbackOnlyBackend, ctx: ToolContext) -> None:
    """The address that passed the check is the one connected to; there is no second lookup."""
    answers = [[ipaddress.ip_address(DOC_IP)], [ipaddress.ip_address("127.0.0.1")]]
    calls: list[str] = []

    async def rebinding_resolver(host: str, port: int):
        calls.append(host)
        return answers[min(len(calls) - 1, 1)]

    tool = WebFetchTool(resolver=rebinding_resolver, network_backend=backend)
    try:
        result = await tool.execute({"url": "http://rebind.test/"}, ctx)
    finally:
        await tool.aclose()
    # The public answer was checked and then used for the connection (the test backend
    # refuses to open it, so nothing leaves the machine); 127.0.0.1 was never asked for.
    assert calls == ["rebind.test"]
    assert backend.attempts == [(DOC_IP, 80)]
    assert result.is_error and "Could not connect" in result.content


async def test_rebinding_to_private_on_the_only_lookup_is_refused(
        backend: LoopbackOnlyBackend, ctx: ToolContext) -> None:
    async def resolver(host: str, port: int):
        return [ipaddress.ip_address("127.0.0.1")]

    tool = WebFetchTool(resolver=resolver, network_backend=backend)
    try:
        result = await tool.execute({"url": "http://rebind.test/"}, ctx)
    finally:
        await tool.aclose()
    assert result.is_error and "rebind.test (127.0.0.1) is a loopback address" in result.content
    assert backend.attempts == []


# -- redirects -----------------------------------------------------------------------------------

async def test_allowed_public_host_is_fetched(tool: WebFetchTool, server: FakeWebServer,
                                              ctx: ToolContext,
                                              backend: LoopbackOnlyBackend) -> None:
    server.html("/hello", "<h1>Hello from a public host</h1>")
    result = await tool.execute({"url": server.url("/hello", host=PUBLIC_NAME)}, ctx)
    assert not result.is_error, result.content
    assert "Hello from a public host" in json.loads(result.content)["content"]
    assert backend.attempts == [("127.0.0.1", server.port)]


@pytest.mark.parametrize("location", [
    "http://127.0.0.1:{port}/secret",
    "http://localhost:{port}/secret",
    "http://[::1]:{port}/secret",
    "http://2130706433:{port}/secret",
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://10.0.0.1/admin",
    "http://internal.test/admin",  # a name that resolves privately: refused at connect time
    "file:///etc/passwd",
    "gopher://127.0.0.1:25/",
])
@pytest.mark.parametrize("follow_cross_host", [False, True])
async def test_redirect_from_allowed_host_to_private_address_is_refused(
        tool: WebFetchTool, server: FakeWebServer, tmp_path: Path, backend: LoopbackOnlyBackend,
        location: str, follow_cross_host: bool) -> None:
    server.redirect("/start", location.format(port=server.port))
    server.html("/secret", "<p>TOP SECRET</p>")
    ctx = make_ctx(tmp_path, follow_cross_host_redirects=follow_cross_host)
    result = await tool.execute({"url": server.url("/start", host=PUBLIC_NAME)}, ctx)
    assert len(server.hits("/start")) == 1  # the allowed first hop was really fetched
    assert not server.hits("/secret")
    assert "TOP SECRET" not in result.content
    if location == "http://internal.test/admin" and not follow_cross_host:
        # Not followed at all: the model is told the new URL, and that call is checked anew.
        assert json.loads(result.content)["redirect_url"] == location
    else:
        assert result.is_error, result.content
        assert "refused" in result.content.lower(), result.content
    # The only socket ever opened went to the allowed first hop.
    assert backend.attempts == [("127.0.0.1", server.port)]


async def test_private_redirect_allowed_only_with_private_access(
        tool: WebFetchTool, server: FakeWebServer, tmp_path: Path) -> None:
    server.redirect("/start", server.url("/inside"))
    server.html("/inside", "<p>intranet page</p>")
    ctx = make_ctx(tmp_path, private=True)
    result = await tool.execute({"url": server.url("/start")}, ctx)
    assert "intranet page" in json.loads(result.content)["content"]


async def test_private_policy_does_not_leak_through_the_connection_pool(
        tool: WebFetchTool, server: FakeWebServer, tmp_path: Path) -> None:
    server.html("/p", "<p>local</p>")
    ok = await tool.execute({"url": server.url("/p", host="localhost")},
                            make_ctx(tmp_path, private=True))
    assert not ok.is_error
    refused = await tool.execute({"url": server.url("/p", host="localhost")}, make_ctx(tmp_path))
    assert refused.is_error and "Refused" in refused.content
    assert len(server.hits("/p")) == 1


# -- URL shape -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("url", "expected"), [
    ("http://user:pass@public.test/", "user name or password"),
    ("https://token@public.test/", "user name or password"),
    ("http://public.test\\@127.0.0.1/", "user name or password"),
    ("file:///etc/passwd", "Only http:// and https://"),
    ("ftp://public.test/file", "Only http:// and https://"),
    ("gopher://public.test/", "Only http:// and https://"),
    ("javascript:alert(1)", "Only http:// and https://"),
    ("data:text/html,<h1>x</h1>", "Only http:// and https://"),
    ("public.test/page", "Only http:// and https://"),
    ("http:///nohost", "no host"),
    ("http://public.test:99999/", "not a valid TCP port"),
    ("http://public.test/" + "a" * 5000, "limit is 4,096"),
    ("http://public.test/a b", "spaces or control characters"),
    ("http://public.test/\r\nX-Injected: 1", "spaces or control characters"),
    ("http://[fe80::1%25eth0]/", "zone id"),
    ("http://127%2E0%2E0%2E1/", "contains '%'"),
    ("http://exa_mple..test/", "not a valid host name"),
])
async def test_bad_urls_are_refused_with_a_fix(tool: WebFetchTool, ctx: ToolContext,
                                               backend: LoopbackOnlyBackend, url: str,
                                               expected: str) -> None:
    result = await tool.execute({"url": url}, ctx)
    assert result.is_error
    assert expected in result.content, result.content
    assert backend.attempts == []


def test_guard_accepts_ordinary_urls() -> None:
    guard = NetGuard()
    for url in ("https://docs.python.org/3/", "http://example.com:8080/a?b=c#d",
                "https://例え.jp/", "https://my_host.example.com/", f"http://{DOC_IP}/",
                "https://[2606:4700:4700::1111]/", "https://cafe.be/", "https://0x.example/"):
        guard.check_url(url)
    with pytest.raises(BlockedURLError):
        guard.check_url("http://127.0.0.1/")


# -- TLS: connecting to the checked IP keeps SNI and certificate checks on the name ------------

@pytest.fixture
def tls_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("cryptography")
    from tests.fakes.web_server import make_tls_files

    ca_file, context = make_tls_files(tmp_path, [PUBLIC_NAME])
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with FakeWebServer(tls=context) as srv:
        yield srv


async def test_https_verifies_the_host_name_while_connecting_to_the_checked_ip(
        tls_server: FakeWebServer, resolver, backend: LoopbackOnlyBackend,
        ctx: ToolContext) -> None:
    tls_server.html("/tls", "<h1>Served over TLS</h1>")
    tool = WebFetchTool(resolver=resolver, address_filter=public_test_filter,
                        network_backend=backend)
    try:
        ok = await tool.execute({"url": tls_server.url("/tls", host=PUBLIC_NAME)}, ctx)
        assert not ok.is_error, ok.content
        assert "Served over TLS" in json.loads(ok.content)["content"]
        assert backend.attempts == [("127.0.0.1", tls_server.port)]  # the IP, not the name
        assert tls_server.hits("/tls")[0].headers["host"] == f"{PUBLIC_NAME}:{tls_server.port}"
        # The same server under a name its certificate does not cover is refused.
        tool_other = WebFetchTool(resolver=stub_resolver({"other.test": ["127.0.0.1"]}),
                                  address_filter=lambda host, ip: None,
                                  network_backend=backend)
        try:
            bad = await tool_other.execute({"url": tls_server.url("/tls", host="other.test")},
                                           ctx)
        finally:
            await tool_other.aclose()
        assert bad.is_error and "TLS" in bad.content, bad.content
        assert len(tls_server.hits("/tls")) == 1
    finally:
        await tool.aclose()
