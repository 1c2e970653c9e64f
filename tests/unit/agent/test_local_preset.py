"""An Anthropic-compatible server on this computer (Ollama, llama.cpp) needs no key; any other
address still does."""

from __future__ import annotations

import pytest

from app.core.agent.models.base import ProviderAuthError
from app.core.agent.models.factory import create_provider, is_loopback_url
from app.core.store.profiles import AgentProfile
from tests.fakes.anthropic_server import FakeAnthropicServer, Response


@pytest.mark.parametrize(("url", "local"), [
    ("http://127.0.0.1:11434", True), ("http://localhost:8080/", True),
    ("http://[::1]:11434", True), ("https://api.anthropic.com", False),
    ("http://127.0.0.1.evil.example", False), ("", False), ("http://[bad", False)])
def test_loopback_urls(url: str, local: bool) -> None:
    assert is_loopback_url(url) is local


async def test_a_local_server_works_without_a_key(
        fake_anthropic: FakeAnthropicServer) -> None:
    profile = AgentProfile(name="local", base_url=fake_anthropic.base_url, model="qwen3")
    provider = create_provider(profile, max_retries=0)
    fake_anthropic.script(Response.text("Hello from a local model."))
    from app.core.agent.models.base import ModelRequest

    turn = await provider.stream(ModelRequest(model="qwen3", messages=[
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}], max_tokens=50),
        lambda _t: None)
    assert turn.content[0]["text"] == "Hello from a local model."
    await provider.aclose()


def test_a_remote_server_still_needs_a_key() -> None:
    profile = AgentProfile(name="remote", base_url="https://api.example.com")
    with pytest.raises(ProviderAuthError):
        create_provider(profile)
