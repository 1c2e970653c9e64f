"""The OpenAI-compatible provider drives the same loop (local models: Ollama, llama.cpp, ...)."""

from __future__ import annotations

import pytest

from app.core.agent.events import ApprovalResponse, RunFailed, RunFinished
from app.core.agent.models import (
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderOverloaded,
    ProviderRateLimited,
    ProviderServerError,
    list_models,
)
from app.core.agent.models.openai_compat import normalize_base_url, to_openai_messages
from app.core.store.profiles import AgentProfile
from tests.fakes.anthropic_server import FakeAnthropicServer, Response, tool
from tests.unit.agent.helpers import Harness


@pytest.fixture
def openai_harness(harness: Harness) -> Harness:
    harness.update_profile(provider="openai_compatible", model="qwen2.5-coder",
                           base_url=harness.server.base_url, temperature=0.3)
    return harness


async def test_tool_loop_over_chat_completions(openai_harness: Harness) -> None:
    h = openai_harness
    h.allow("record")
    h.approver.then(ApprovalResponse.decline("no slow work"))
    h.server.script(
        Response.tools(tool("record", {"value": "a"}, id="call_1"),
                       tool("slow", {}, id="call_2"), text="Working."),
        Response.text("All done."))
    session = h.session(client_factory=None)  # the profile picks the provider; no key needed
    await session.run("go")

    assert h.record.calls == [{"value": "a"}]
    assert not h.slow.started
    assert h.last() == RunFinished("end_turn", 2, 24, h.last().output_tokens)
    assert h.text() == "Working.All done."
    first, second = h.server.message_requests
    assert first.path == "/v1/chat/completions"
    assert first.body["model"] == "qwen2.5-coder" and first.body["stream"] is True
    assert first.body["temperature"] == 0.3
    system, user = first.body["messages"]
    assert system["role"] == "system" and "Project folder:" in system["content"]
    assert user == {"role": "user", "content": "go"}
    assert "record" in first.tool_names
    fn = next(t for t in first.body["tools"] if t["function"]["name"] == "record")
    assert fn["type"] == "function" and fn["function"]["parameters"]["required"] == ["value"]
    assert "authorization" not in first.headers
    assistant, r1, r2 = second.body["messages"][2:]  # after the system and user messages
    assert assistant["role"] == "assistant" and assistant["content"] == "Working."
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_1", "call_2"]
    assert r1 == {"role": "tool", "tool_call_id": "call_1", "content": "recorded a"}
    assert r2["role"] == "tool" and r2["content"].startswith("Error: The user declined")


@pytest.mark.parametrize(("status", "error"), [
    (401, ProviderAuthError), (429, ProviderRateLimited), (500, ProviderServerError),
    (529, ProviderOverloaded)])
async def test_errors_map_to_classes(openai_harness: Harness, status: int,
                                     error: type[ProviderError]) -> None:
    openai_harness.server.script(*[Response.error(status)] * 3)
    session = openai_harness.session(client_factory=None)  # default: 2 retries
    await session.run("go")
    failed = openai_harness.last()
    assert isinstance(failed, RunFailed) and failed.error is error
    retried = status != 401
    assert len(openai_harness.server.message_requests) == (3 if retried else 1)


async def test_dropped_stream(openai_harness: Harness) -> None:
    openai_harness.server.script(Response.text("a b c d e f g h", drop_after=3))
    await openai_harness.session(client_factory=None).run("go")
    failed = openai_harness.last()
    assert isinstance(failed, RunFailed) and failed.error is ProviderConnectionError


async def test_key_is_sent_when_configured(openai_harness: Harness,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "local-secret")
    openai_harness.server.script(Response.text("ok"))
    await openai_harness.session(client_factory=None).run("go")
    assert openai_harness.server.last_request.headers["authorization"] == "Bearer local-secret"


async def test_list_models(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.models = ["llama3.2", "qwen2.5-coder"]
    profile = AgentProfile(name="local", provider="openai_compatible", model="llama3.2",
                           base_url=fake_anthropic.base_url + "/v1")
    assert await list_models(profile) == ["llama3.2", "qwen2.5-coder"]


def test_base_url_forms() -> None:
    assert normalize_base_url("http://127.0.0.1:11434") == "http://127.0.0.1:11434/v1/"
    assert normalize_base_url("http://127.0.0.1:11434/v1/") == "http://127.0.0.1:11434/v1/"
    assert normalize_base_url("http://h/v1/chat/completions") == "http://h/v1/"


def test_message_mapping() -> None:
    msgs = to_openai_messages("sys", [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "t",
                                           "input": {"a": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1",
                                      "content": "out", "is_error": False},
                                     {"type": "text", "text": "next"}]},
    ])
    assert msgs == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function",
                         "function": {"name": "t", "arguments": '{"a": 1}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "out"},
        {"role": "user", "content": "next"},
    ]
