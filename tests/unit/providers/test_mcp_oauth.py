"""OAuth sign-in for HTTP MCP servers, against a loopback authorization server in front of a
protected streamable-HTTP MCP server (tests/fakes/oauth_server.py), with the real SDK client,
the real loopback redirect listener and the keyring module (on an in-memory backend)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import keyring
import pytest
from keyring.backends.fail import Keyring as NoKeyring

from app.core.secrets import KEYRING_SERVICE
from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.oauth.callback import LoopbackCallback
from app.core.tools.providers.mcp.oauth.sign_in import McpOAuth, SignInError
from app.core.tools.providers.mcp.provider import McpProvider
from tests.fakes.oauth_server import FakeOAuthServer, pkce_challenge
from tests.mcp_servers import demo_server_entry
from tests.ui.conftest import MemoryKeyring

TOKENS = "mcp:web:oauth:tokens"
CLIENT = "mcp:web:oauth:client"


class FollowingBrowser:
    """Plays the browser: GETs the authorization URL and follows the redirect to the loopback
    callback, as a browser does once the person approved."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.pages: list[str] = []

    async def __call__(self, url: str) -> None:
        self.opened.append(url)
        async with httpx2.AsyncClient(follow_redirects=True) as client:
            self.pages.append((await client.get(url)).text)


class IdleBrowser:
    """Opens nothing: the person never completes the sign-in."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()

    def __call__(self, url: str) -> bool:
        self.opened.set()
        return True


@pytest.fixture
def memory_keyring():
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def fake():
    server = FakeOAuthServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(project_root=project)


def _provider(fake: FakeOAuthServer, oauth: McpOAuth, **servers: dict[str, object]
              ) -> McpProvider:
    entries = {"web": {"url": fake.mcp_url}, **servers}
    provider = McpProvider(parse_mcp_config({"mcpServers": entries}).servers,
                           startup_timeout_s=20)
    provider.oauth = oauth
    return provider


async def _signed_in(fake: FakeOAuthServer, browser: FollowingBrowser) -> McpProvider:
    provider = _provider(fake, McpOAuth(browser))
    await provider.start()
    message = await provider.sign_in("web")
    assert message == "Signed in to MCP server 'web'."
    assert provider.status("web")[0] == "running", provider.server_status("web")
    return provider


async def test_a_401_at_start_means_needs_sign_in_and_no_browser_opens(fake, memory_keyring):
    browser = FollowingBrowser()
    oauth = McpOAuth(browser)
    provider = _provider(fake, oauth)
    try:
        await provider.start()
        status = provider.server_status("web")
        assert status.state == "failed" and status.needs_auth
        assert status.message.startswith("needs sign-in")
        assert oauth.needs_sign_in("web")
        assert browser.opened == [] and fake.stats.authorizations == 0
        assert provider.tools() == []
    finally:
        await provider.aclose()


async def test_sign_in_lists_the_tools_and_a_call_works(fake, memory_keyring, ctx):
    browser = FollowingBrowser()
    provider = await _signed_in(fake, browser)
    try:
        assert [t.remote_name for t in provider.tools()] == ["echo", "whoami"]
        result = await provider.call("web", "whoami", {}, ctx)
        assert not result.is_error and "signed-in user" in result.content
        # One registration, one authorization, one PKCE-checked code exchange, all passed.
        assert (fake.stats.registrations, fake.stats.code_grants) == (1, 1)
        assert fake.stats.token_errors == []
        query = parse_qs(urlsplit(browser.opened[0]).query)
        assert query["code_challenge_method"] == ["S256"]
        assert query["redirect_uri"][0].startswith("http://127.0.0.1:")
        assert "Signed in" in browser.pages[0]
        stored = json.loads(memory_keyring.values[(KEYRING_SERVICE, TOKENS)])
        assert stored["url"] == fake.mcp_url and stored["tokens"]["access_token"]
        assert (KEYRING_SERVICE, CLIENT) in memory_keyring.values
        assert not provider.server_status("web").needs_auth
    finally:
        await provider.aclose()


async def test_the_fake_rejects_a_wrong_pkce_verifier(fake):
    async with httpx2.AsyncClient() as client:
        reg = (await client.post(f"{fake.base}/oauth/register",
                                 json={"redirect_uris": ["http://127.0.0.1:1/callback"]})).json()

        async def code() -> str:
            answer = await client.get(f"{fake.base}/oauth/authorize", params={
                "response_type": "code", "client_id": reg["client_id"],
                "redirect_uri": "http://127.0.0.1:1/callback", "state": "s",
                "code_challenge": pkce_challenge("right-verifier" * 4),
                "code_challenge_method": "S256"})
            assert answer.status_code == 302
            return parse_qs(urlsplit(answer.headers["location"]).query)["code"][0]

        def exchange(code: str, verifier: str) -> dict[str, str]:
            return {"grant_type": "authorization_code", "code": code,
                    "client_id": reg["client_id"], "code_verifier": verifier,
                    "redirect_uri": "http://127.0.0.1:1/callback"}

        wrong = await client.post(f"{fake.base}/oauth/token",
                                  data=exchange(await code(), "wrong" * 9))
        assert wrong.status_code == 400 and "PKCE" in wrong.text
        right = await client.post(f"{fake.base}/oauth/token",
                                  data=exchange(await code(), "right-verifier" * 4))
        assert right.status_code == 200 and right.json()["access_token"]


async def test_an_expired_access_token_is_refreshed_without_the_person(
        fake, memory_keyring, ctx):
    browser = FollowingBrowser()
    provider = await _signed_in(fake, browser)
    try:
        fake.expire_access_tokens()
        result = await provider.call("web", "echo", {"text": "still here"}, ctx)
        assert not result.is_error and "still here" in result.content
        assert fake.stats.refresh_grants == 1 and len(browser.opened) == 1
    finally:
        await provider.aclose()


async def test_tokens_survive_a_restart_of_the_provider(fake, memory_keyring, ctx):
    browser = FollowingBrowser()
    first = await _signed_in(fake, browser)
    await first.aclose()
    # A new app run: new objects, the same keyring; the access token expired meanwhile, so
    # the stored refresh token (and stored token endpoint) must carry it.
    fake.expire_access_tokens()
    second = _provider(fake, McpOAuth(browser))
    try:
        await second.start()
        assert second.status("web")[0] == "running", second.server_status("web")
        assert (await second.call("web", "echo", {"text": "hi"}, ctx)).content.startswith("hi")
        assert fake.stats.refresh_grants == 1 and len(browser.opened) == 1
    finally:
        await second.aclose()


async def test_a_401_during_a_call_tells_the_model_to_ask_for_sign_in(fake, memory_keyring,
                                                                      ctx):
    provider = await _signed_in(fake, FollowingBrowser())
    try:
        fake.expire_access_tokens()
        fake.revoke_refresh_tokens()
        result = await provider.call("web", "echo", {"text": "hi"}, ctx, label="web__echo")
        assert result.is_error
        assert "requires the user to sign in" in result.content
        assert "Settings → MCP servers" in result.content
        status = provider.server_status("web")
        assert status.needs_auth and status.message.startswith("needs sign-in")
    finally:
        await provider.aclose()


async def test_sign_out_forgets_the_tokens(fake, memory_keyring):
    provider = await _signed_in(fake, FollowingBrowser())
    try:
        await provider.sign_out("web")
        assert (KEYRING_SERVICE, TOKENS) not in memory_keyring.values
        assert (KEYRING_SERVICE, CLIENT) not in memory_keyring.values
        status = provider.server_status("web")
        assert status.state == "failed" and status.needs_auth
    finally:
        await provider.aclose()


async def test_a_sign_in_nobody_completes_ends_with_a_message_and_blocks_nothing(
        fake, memory_keyring, ctx):
    browser = IdleBrowser()
    oauth = McpOAuth(browser, sign_in_timeout_s=2.0)
    provider = _provider(fake, oauth, local=demo_server_entry())
    try:
        await provider.start()
        signing_in = asyncio.create_task(provider.sign_in("web"))
        await browser.opened.wait()
        assert oauth.signing_in("web")
        # Meanwhile another server works.
        result = await provider.call("local", "echo", {"text": "meanwhile"}, ctx)
        assert not signing_in.done() and result.content.startswith("meanwhile")
        with pytest.raises(SignInError, match="not completed within 2 s"):
            await signing_in
        assert not oauth.signing_in("web")
        assert provider.server_status("web").needs_auth
    finally:
        await provider.aclose()


async def test_a_refused_sign_in_says_so(fake, memory_keyring):
    fake.deny = True
    provider = _provider(fake, McpOAuth(FollowingBrowser()))
    try:
        await provider.start()
        with pytest.raises(SignInError, match="refused: access_denied: the person said no"):
            await provider.sign_in("web")
        assert provider.server_status("web").needs_auth
    finally:
        await provider.aclose()


async def test_without_a_keyring_the_sign_in_lasts_for_the_session(fake, ctx):
    previous = keyring.get_keyring()
    keyring.set_keyring(NoKeyring())
    try:
        browser = FollowingBrowser()
        oauth = McpOAuth(browser)
        provider = _provider(fake, oauth)
        try:
            await provider.start()
            message = await provider.sign_in("web")
            assert "kept for this session only" in message
            assert provider.status("web")[0] == "running", provider.server_status("web")
            await provider.restart("web")
            assert provider.status("web")[0] == "running"
            assert len(browser.opened) == 1
        finally:
            await provider.aclose()
    finally:
        keyring.set_keyring(previous)


async def test_a_configured_authorization_header_that_is_refused_is_named(fake,
                                                                         memory_keyring):
    browser = FollowingBrowser()
    provider = _provider(fake, McpOAuth(browser))
    await provider.apply_config(parse_mcp_config({"mcpServers": {"web": {
        "url": fake.mcp_url, "headers": {"Authorization": "Bearer wrong"}}}}).servers)
    try:
        status = provider.server_status("web")
        assert status.state == "failed" and status.needs_auth
        assert "refused the configured Authorization header" in status.message
        assert browser.opened == [] and fake.stats.registrations == 0
        with pytest.raises(SignInError, match="does not sign in with OAuth"):
            await provider.sign_in("web")
    finally:
        await provider.aclose()


async def test_the_loopback_callback_ignores_stray_requests():
    callback = await LoopbackCallback.open()
    try:
        for stray in (b"garbage\r\n\r\n", b"GET /favicon.ico HTTP/1.1\r\n\r\n",
                      b"POST /callback?code=x HTTP/1.1\r\n\r\n"):
            reader, writer = await asyncio.open_connection("127.0.0.1", callback.port)
            writer.write(stray)
            answer = await reader.read()
            writer.close()
            assert answer.split(b" ")[1] in (b"400", b"404")
        async with httpx2.AsyncClient() as client:
            page = await client.get(f"{callback.redirect_uri}?code=abc&state=xyz")
        assert page.status_code == 200
        result = await callback.wait()
        assert (result.code, result.state) == ("abc", "xyz")
    finally:
        await callback.close()


async def test_signing_in_again_reuses_the_client_registration(fake, memory_keyring):
    browser = FollowingBrowser()
    provider = await _signed_in(fake, browser)
    try:
        fake.expire_access_tokens()
        fake.revoke_refresh_tokens()
        await provider.sign_in("web")
        assert provider.status("web")[0] == "running"
        # The same loopback port, so the registered redirect URI still matches.
        uris = [parse_qs(urlsplit(url).query)["redirect_uri"] for url in browser.opened]
        assert len(uris) == 2 and uris[0] == uris[1]
        assert (fake.stats.registrations, fake.stats.authorizations) == (1, 2)
    finally:
        await provider.aclose()
