"""The Anthropic provider's own HTTP client (no SDK): headers, retries, model paging, and that
a process using it never loads the SDK. Against the fake API on 127.0.0.1."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.core.agent.models import (
    ModelRequest,
    ProviderAuthError,
    ProviderBadRequest,
    ProviderConnectionError,
    ProviderOverloaded,
    ProviderRateLimited,
    ProviderServerError,
)
from app.core.agent.models.anthropic import MAX_MODEL_PAGES, AnthropicProvider
from tests.fakes.anthropic_server import FakeAnthropicServer, Response
from tests.unit.agent.helpers import sdk_modules_loaded_after

ROOT = Path(__file__).resolve().parents[3]
KEY = "sk-ant-test-transport-0000"


@pytest.fixture
async def provider(fake_anthropic: FakeAnthropicServer) -> AsyncIterator[AnthropicProvider]:
    client = AnthropicProvider(api_key=KEY, base_url=fake_anthropic.base_url, max_retries=2)
    yield client
    await client.aclose()


def _request(text: str = "hello") -> ModelRequest:
    return ModelRequest(model="claude-sonnet-4-5", max_tokens=64,
                        messages=[{"role": "user", "content": text}])


async def _ask(provider: AnthropicProvider) -> str:
    turn = await provider.stream(_request(), lambda _t: None)
    return "".join(b["text"] for b in turn.content if b["type"] == "text")


async def test_a_request_carries_the_key_the_api_version_and_json(
        provider: AnthropicProvider, fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.api_key = KEY  # any other key would get a 401
    fake_anthropic.script(Response.text("Hi there."))
    assert await _ask(provider) == "Hi there."
    sent = fake_anthropic.last_request
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["accept"] == "text/event-stream"
    assert sent.headers["user-agent"].startswith("tebiki")
    assert sent.body["stream"] is True and sent.body["model"] == "claude-sonnet-4-5"


@pytest.mark.parametrize("suffix", ["/", "/proxy", "/proxy/"])
async def test_the_base_url_is_the_host_root_v1_messages_is_appended(
        fake_anthropic: FakeAnthropicServer, suffix: str) -> None:
    fake_anthropic.script(Response.text("ok"))
    client = AnthropicProvider(api_key=KEY, base_url=fake_anthropic.base_url + suffix)
    try:
        await client.stream(_request(), lambda _t: None)
    except ProviderBadRequest:  # the fake knows no /proxy/v1/messages: a 404
        pass
    finally:
        await client.aclose()
    expected = "/v1/messages" if suffix == "/" else "/proxy/v1/messages"
    assert fake_anthropic.requests[-1].path == expected


async def test_a_wrong_key_is_an_auth_error_and_not_retried(
        provider: AnthropicProvider, fake_anthropic: FakeAnthropicServer,
        waits: list[float]) -> None:
    fake_anthropic.api_key = "another-key"
    with pytest.raises(ProviderAuthError, match="invalid x-api-key"):
        await _ask(provider)
    assert len(fake_anthropic.requests) == 1 and waits == []


async def test_a_429_waits_what_retry_after_ms_asks_then_succeeds(
        provider: AnthropicProvider, fake_anthropic: FakeAnthropicServer,
        waits: list[float]) -> None:
    fake_anthropic.script(Response.error(429, retry_after_ms=250), Response.text("Done."))
    assert await _ask(provider) == "Done."
    assert len(fake_anthropic.message_requests) == 2
    assert waits == [0.25]


async def test_retry_after_in_seconds_is_honoured(
        provider: AnthropicProvider, fake_anthropic: FakeAnthropicServer,
        waits: list[float]) -> None:
    fake_anthropic.script(Response.error(503, retry_after_ms=None,
                                         headers={"retry-after": "3"}),
                          Response.text("Done."))
    assert await _ask(provider) == "Done."
    assert waits == [3.0]


async def test_529_is_retried_with_backoff_until_max_retries(
        provider: AnthropicProvider, fake_anthropic: FakeAnthropicServer,
        waits: list[float]) -> None:
    fake_anthropic.script(*[Response.error(529, retry_after_ms=None)] * 3,
                          Response.text("never reached"))
    with pytest.raises(ProviderOverloaded, match="Overloaded"):
        await _ask(provider)
    assert len(fake_anthropic.message_requests) == 3  # the first try and max_retries=2
    assert fake_anthropic.pending == 1
    # Exponential backoff with up to 25 % jitter: 0.5 s, then 1 s.
    assert len(waits) == 2
    assert 0.375 <= waits[0] <= 0.5 and 0.75 <= waits[1] <= 1.0


async def test_529_then_success(provider: AnthropicProvider,
                                fake_anthropic: FakeAnthropicServer,
                                waits: list[float]) -> None:
    fake_anthropic.script(Response.error(529), Response.text("Back."))
    assert await _ask(provider) == "Back."
    assert len(fake_anthropic.message_requests) == 2 and len(waits) == 1


async def test_x_should_retry_false_on_a_500_is_obeyed(
        provider: AnthropicProvider, fake_anthropic: FakeAnthropicServer,
        waits: list[float]) -> None:
    fake_anthropic.script(Response.error(500, headers={"x-should-retry": "false"}),
                          Response.text("never reached"))
    with pytest.raises(ProviderServerError):
        await _ask(provider)
    assert len(fake_anthropic.message_requests) == 1 and waits == []


async def test_x_should_retry_true_retries_even_a_400(
        provider: AnthropicProvider, fake_anthropic: FakeAnthropicServer,
        waits: list[float]) -> None:
    fake_anthropic.script(Response.error(400, headers={"x-should-retry": "true"}),
                          Response.text("Accepted."))
    assert await _ask(provider) == "Accepted."
    assert len(fake_anthropic.message_requests) == 2


async def test_a_400_is_never_retried(provider: AnthropicProvider,
                                      fake_anthropic: FakeAnthropicServer,
                                      waits: list[float]) -> None:
    fake_anthropic.script(Response.error(400, message="max_tokens: too large"),
                          Response.text("never reached"))
    with pytest.raises(ProviderBadRequest, match="max_tokens: too large"):
        await _ask(provider)
    assert len(fake_anthropic.message_requests) == 1 and waits == []


async def test_the_last_429_is_reported_after_the_retries(
        provider: AnthropicProvider, fake_anthropic: FakeAnthropicServer,
        waits: list[float]) -> None:
    fake_anthropic.script(*[Response.error(429)] * 3)
    with pytest.raises(ProviderRateLimited) as caught:
        await _ask(provider)
    assert caught.value.status == 429 and len(waits) == 2


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_refused_connection_is_retried_then_reported(waits: list[float]) -> None:
    client = AnthropicProvider(api_key=KEY, base_url=f"http://127.0.0.1:{_closed_port()}",
                               max_retries=2)
    try:
        with pytest.raises(ProviderConnectionError, match="Connection to Anthropic API failed"):
            await _ask(client)
        assert len(waits) == 2  # three attempts
        with pytest.raises(ProviderConnectionError):
            await client.list_models()
        assert len(waits) == 4
    finally:
        await client.aclose()


async def test_a_stream_cut_mid_answer_is_not_replayed(
        provider: AnthropicProvider, fake_anthropic: FakeAnthropicServer,
        waits: list[float]) -> None:
    shown: list[str] = []
    fake_anthropic.script(Response.text("never finished " * 20, drop_after=6),
                          Response.text("a replay"))
    with pytest.raises(ProviderConnectionError, match="cut off"):
        await provider.stream(_request(), shown.append)
    assert shown  # text was already on the screen: resending would show it twice
    assert len(fake_anthropic.message_requests) == 1 and fake_anthropic.pending == 1
    assert waits == []


async def test_the_model_list_follows_has_more_pages(
        provider: AnthropicProvider, fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.models = ["claude-a", "claude-b",
                             {"id": "claude-c", "display_name": "Claude C",
                              "created_at": "2026-02-03T00:00:00Z", "line": "sonnet"}]
    fake_anthropic.models_page_size = 2
    infos = await provider.list_model_infos()
    assert [m.id for m in infos] == ["claude-a", "claude-b", "claude-c"]
    assert (infos[2].display_name, infos[2].line, infos[2].created_at.year) == (
        "Claude C", "sonnet", 2026)
    pages = [r for r in fake_anthropic.requests if r.path == "/v1/models"]
    assert [r.query for r in pages] == ["limit=1000", "limit=1000&after_id=claude-b"]
    assert pages[0].headers["x-api-key"] == KEY
    assert await provider.list_models() == ["claude-a", "claude-b", "claude-c"]


async def test_a_model_list_that_always_has_more_stops_at_the_page_cap(
        provider: AnthropicProvider, fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.models_endless = True
    ids = await provider.list_models()
    assert len(ids) == MAX_MODEL_PAGES
    assert len([r for r in fake_anthropic.requests if r.path == "/v1/models"]) \
        == MAX_MODEL_PAGES


async def test_a_model_list_error_is_mapped(provider: AnthropicProvider,
                                            fake_anthropic: FakeAnthropicServer,
                                            waits: list[float]) -> None:
    fake_anthropic.models_error = Response.error(401)
    with pytest.raises(ProviderAuthError, match="invalid x-api-key"):
        await provider.list_models()


@pytest.mark.parametrize("key", ["sk-ant-one\nsk-ant-two", "sk-ant-\u2013dash"])
def test_a_key_no_header_can_carry_is_refused_clearly(key: str) -> None:
    with pytest.raises(ProviderAuthError, match="characters an API key cannot have") as caught:
        AnthropicProvider(api_key=key, base_url="http://127.0.0.1:9")
    assert key not in caught.value.message


# -- the SDK is never loaded ---------------------------------------------------------------


def test_using_the_provider_end_to_end_never_loads_the_sdk():
    loaded = sdk_modules_loaded_after("""
        import asyncio
        from app.core.agent.models import ModelRequest, client_factory
        from app.core.store.profiles import AgentProfile
        from tests.fakes.anthropic_server import FakeAnthropicServer, Response

        async def main(url):
            provider = client_factory(api_key="k", base_url=url, max_retries=1)(
                AgentProfile(name="p"))
            try:
                turn = await provider.stream(ModelRequest(
                    model="claude-sonnet-4-5", max_tokens=16,
                    messages=[{"role": "user", "content": "hi"}]), lambda _t: None)
                assert turn.content == [{"type": "text", "text": "Hello."}], turn
                assert "claude-sonnet-4-5" in await provider.list_models()
            finally:
                await provider.aclose()

        with FakeAnthropicServer() as server:
            server.script(Response.error(529), Response.text("Hello."))
            asyncio.run(main(server.base_url))
    """)
    assert loaded == {"anthropic": False, "httpx2": False}


class _Recorder:
    """Two loopback HTTP servers: one that answers every request with a redirect to the
    other, and the other, which records what reaches it."""

    def __init__(self, status: int) -> None:
        import http.server
        import threading

        self.reached: list[dict[str, str]] = []
        recorder = self

        class Target(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                recorder.reached.append(dict(self.headers))
                self.send_response(200)
                self.end_headers()

            do_GET = do_POST

            def log_message(self, *args: object) -> None:
                pass

        self.target = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Target)
        target_url = f"http://127.0.0.1:{self.target.server_address[1]}"

        class Redirector(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.send_response(status)
                self.send_header("Location", target_url + self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST

            def log_message(self, *args: object) -> None:
                pass

        self.redirector = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirector)
        self.url = f"http://127.0.0.1:{self.redirector.server_address[1]}"
        for server in (self.target, self.redirector):
            threading.Thread(target=server.serve_forever, daemon=True).start()

    def close(self) -> None:
        for server in (self.target, self.redirector):
            server.shutdown()
            server.server_close()


@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_a_redirect_is_refused_and_the_key_never_reaches_its_target(
        status: int, waits: list[float]) -> None:
    # The key travels in x-api-key, which an HTTP client does not strip when a redirect
    # leads to another host: following one would hand the key to whoever the server names.
    servers = _Recorder(status)
    client = AnthropicProvider(api_key=KEY, base_url=servers.url, max_retries=2)
    try:
        with pytest.raises(ProviderBadRequest, match="redirect"):
            await client.stream(_request(), lambda _t: None)
        with pytest.raises(ProviderBadRequest, match="redirect"):
            await client.list_models()
    finally:
        await client.aclose()
        servers.close()
    assert servers.reached == []
    assert waits == []  # not retried: resending gets the same redirect
