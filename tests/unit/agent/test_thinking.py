"""Adaptive thinking and effort: the request parameters, thinking blocks kept and sent back
unchanged in a tool loop (the fake rejects a continuation without them, as the API does),
thinking never shown as answer text, and the OpenAI-compatible path unaffected."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from app.core.agent.events import RunFailed, RunFinished
from app.core.agent.models import MalformedStream, ModelRequest, ProviderBadRequest
from app.core.agent.models.anthropic import _TurnAccumulator
from app.core.agent.models.anthropic_request import request_body
from app.core.agent.models.openai_compat import build_body, to_openai_messages
from app.core.agent.request_options import request_options
from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    RedactedThinking,
    Response,
    Text,
    Thinking,
    signature_for,
    tool,
)
from tests.unit.agent.helpers import TEST_KEY, Harness

THOUGHT = "The user wants a record. I should call the record tool with value a."


@pytest.fixture
def thinking_on(harness: Harness) -> dict[str, Any]:
    """The profile's own settings (stored, read at each run by ``request_options``): adaptive
    thinking at high effort."""
    options = {"thinking": "adaptive", "thinking_display": None, "effort": "high",
               "cache": True, "cache_ttl": "5m"}
    harness.update_profile(thinking="adaptive", effort="high")
    assert request_options(harness.profile()) == options
    return options


# -- the request ------------------------------------------------------------------------------


def _body(**options: Any) -> dict[str, Any]:
    request = ModelRequest("m", [{"role": "user", "content": "hi"}], 2000, temperature=0.5,
                           **options)
    return json.loads(request_body(request))


def test_thinking_off_sends_nothing_new() -> None:
    body = _body()
    assert "thinking" not in body and "output_config" not in body
    assert body["temperature"] == 0.5


def test_adaptive_thinking_and_effort_parameters() -> None:
    body = _body(thinking="adaptive", effort="high")
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "high"}
    assert "temperature" not in body  # the API takes no other temperature with thinking
    assert _body(thinking="adaptive", thinking_display="omitted")["thinking"] == {
        "type": "adaptive", "display": "omitted"}
    assert _body(effort="max")["output_config"] == {"effort": "max"}  # effort alone
    assert "output_config" not in _body(effort="extreme")
    assert "thinking" not in _body(thinking="always")


def test_openai_compatible_path_ignores_thinking_effort_and_cache() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": THOUGHT, "signature": "sig"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Calling."},
            {"type": "tool_use", "id": "c1", "name": "record", "input": {"value": "a"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1",
                                      "content": "ok"}]},
    ]
    request = ModelRequest("m", messages, 100, system="Sys.", thinking="adaptive",
                           effort="high", cache_ttl="1h",
                           tools=[{"name": "record", "input_schema": {"type": "object"}}])
    body = build_body(request)
    text = json.dumps(body)
    for word in ("thinking", "effort", "output_config", "cache_control", "signature",
                 "opaque"):
        assert word not in text
    assert to_openai_messages("", messages)[1] == {
        "role": "assistant", "content": "Calling.",
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "record", "arguments": '{"value": "a"}'}}]}


# -- the stream -------------------------------------------------------------------------------


def _feed(acc: _TurnAccumulator, *events: dict[str, Any]) -> None:
    for event in events:
        acc.feed(event["type"], json.dumps(event))


def test_thinking_blocks_are_kept_whole_and_never_shown_as_text() -> None:
    shown: list[str] = []
    acc = _TurnAccumulator(shown.append)
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 3}}}
    _feed(acc, start,
          {"type": "content_block_start", "index": 0,
           "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
          {"type": "content_block_delta", "index": 0,
           "delta": {"type": "thinking_delta", "thinking": "Let me "}},
          {"type": "content_block_delta", "index": 0,
           "delta": {"type": "thinking_delta", "thinking": "think."}},
          {"type": "content_block_delta", "index": 0,
           "delta": {"type": "signature_delta", "signature": "SIG=="}},
          {"type": "content_block_stop", "index": 0},
          {"type": "content_block_start", "index": 1,
           "content_block": {"type": "redacted_thinking", "data": "ENCRYPTED"}},
          {"type": "content_block_stop", "index": 1},
          {"type": "content_block_start", "index": 2,
           "content_block": {"type": "text", "text": ""}},
          {"type": "content_block_delta", "index": 2,
           "delta": {"type": "text_delta", "text": "Answer."}},
          {"type": "content_block_stop", "index": 2},
          {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
           "usage": {"output_tokens": 9}},
          {"type": "message_stop"})
    turn = acc.finish()
    assert shown == ["Answer."]
    assert turn.content == [
        {"type": "thinking", "thinking": "Let me think.", "signature": "SIG=="},
        {"type": "redacted_thinking", "data": "ENCRYPTED"},
        {"type": "text", "text": "Answer."}]


def test_a_turn_of_thinking_alone_stores_nothing() -> None:
    acc = _TurnAccumulator(lambda t: None)
    _feed(acc, {"type": "message_start", "message": {"usage": {}}},
          {"type": "content_block_start", "index": 0,
           "content_block": {"type": "thinking", "thinking": "hm", "signature": "s"}},
          {"type": "content_block_stop", "index": 0},
          {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
          {"type": "message_stop"})
    assert acc.finish().content == []


@pytest.mark.parametrize("delta", [{"type": "thinking_delta", "thinking": 5},
                                   {"type": "signature_delta", "signature": ["x"]}])
def test_a_malformed_thinking_delta_is_a_malformed_stream(delta: dict[str, Any]) -> None:
    acc = _TurnAccumulator(lambda t: None)
    _feed(acc, {"type": "message_start", "message": {"usage": {}}},
          {"type": "content_block_start", "index": 0,
           "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
    with pytest.raises(MalformedStream):
        _feed(acc, {"type": "content_block_delta", "index": 0, "delta": delta})


# -- the tool loop against the fake ------------------------------------------------------------


async def test_thinking_round_trips_through_a_tool_loop(harness: Harness,
                                                        thinking_on: dict[str, Any]) -> None:
    harness.allow("record")
    harness.update_profile(temperature=0.4)  # not sent with thinking (the fake would refuse)
    harness.server.script(
        Response.of(Thinking(THOUGHT), RedactedThinking(), Text("Recording."),
                    tool("record", {"value": "a"})),
        Response.of(Thinking("Recorded; now answer."), Text("Done.")))
    session = harness.session()
    await session.run("record a")

    assert harness.last() == RunFinished("end_turn", 2, 24, harness.last().output_tokens)
    assert harness.text() == "Recording.Done."  # no thinking in the answer text
    first, second = harness.server.message_requests
    assert first.body["thinking"] == {"type": "adaptive"}
    assert first.body["output_config"] == {"effort": "high"}
    assert "temperature" not in first.body
    assistant = second.body["messages"][1]
    assert assistant["content"][:2] == [
        {"type": "thinking", "thinking": THOUGHT, "signature": signature_for(THOUGHT)},
        RedactedThinking().block()]
    assert [b["type"] for b in assistant["content"][2:]] == ["text", "tool_use"]
    stored = harness.stored(session.conversation_id)
    assert stored[1]["content"][0]["signature"] == signature_for(THOUGHT)
    assert stored[3]["content"][0] == {"type": "thinking", "thinking": "Recorded; now answer.",
                                       "signature": signature_for("Recorded; now answer.")}


async def test_thinking_survives_a_restart_mid_conversation(harness: Harness,
                                                           thinking_on: dict[str, Any]) -> None:
    """The blocks are stored as sent: a reloaded conversation continues the tool loop."""
    harness.allow("record")
    harness.server.script(Response.of(Thinking(THOUGHT), tool("record", {"value": "a"})),
                          Response.error(529, retry_after_ms=None))
    session = harness.session()
    await session.run("record a")
    assert isinstance(harness.last(), RunFailed)

    harness.server.script(Response.text("Recovered."))
    reloaded = harness.session(conversation_id=session.conversation_id)
    await reloaded.retry()
    assert isinstance(harness.last(), RunFinished), harness.last()
    assert harness.server.last_request.body["messages"][1]["content"][0]["thinking"] == THOUGHT


async def test_without_thinking_on_the_fake_sends_no_thinking(harness: Harness) -> None:
    harness.server.script(Response.of(Thinking(THOUGHT), Text("Hi.")))
    session = harness.session()
    await session.run("hi")
    assert "thinking" not in harness.server.last_request.body
    assert harness.stored(session.conversation_id)[1]["content"] == [
        {"type": "text", "text": "Hi."}]


# -- the fake's rule, at the HTTP level --------------------------------------------------------


def _post(server: FakeAnthropicServer, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(server.base_url + "/v1/messages", json={**body, "stream": False},
                      headers={"x-api-key": TEST_KEY, "anthropic-version": "2023-06-01"})


def _continuation(assistant: list[dict[str, Any]], tool_id: str) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 2000, "thinking": {"type": "adaptive"},
            "messages": [{"role": "user", "content": "go"},
                         {"role": "assistant", "content": assistant},
                         {"role": "user", "content": [{"type": "tool_result",
                                                       "tool_use_id": tool_id,
                                                       "content": "ok"}]}]}


def test_fake_rejects_a_tool_use_continuation_without_the_thinking_block(
        fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.script(Response.of(Thinking(THOUGHT), tool("record", {"value": "a"})),
                          Response.text("Done."))
    first = _post(fake_anthropic, {"model": "m", "max_tokens": 2000,
                                   "thinking": {"type": "adaptive"},
                                   "messages": [{"role": "user", "content": "go"}]})
    content = first.json()["content"]
    thinking, call = content
    assert thinking["type"] == "thinking" and call["type"] == "tool_use"

    dropped = _post(fake_anthropic, _continuation([call], call["id"]))
    assert dropped.status_code == 400
    error = dropped.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert "must start with a thinking block" in error["message"]
    edited = _post(fake_anthropic, _continuation(
        [{**thinking, "thinking": THOUGHT + " (edited)"}, call], call["id"]))
    assert edited.status_code == 400 and "signature" in edited.json()["error"]["message"]
    with_temperature = _post(fake_anthropic, {**_continuation(content, call["id"]),
                                              "temperature": 0.2})
    assert with_temperature.status_code == 400
    assert fake_anthropic.pending == 1  # rejections use no scripted answer

    kept = _post(fake_anthropic, _continuation(content, call["id"]))
    assert kept.status_code == 200, kept.text
    assert kept.json()["content"] == [{"type": "text", "text": "Done."}]


async def test_a_provider_that_drops_thinking_fails_the_run(
        harness: Harness, thinking_on: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What the loop did before thinking was kept: the continuation is rejected (400), the run
    fails with a bad request instead of going on without the model's reasoning."""
    from app.core.agent.models import anthropic as anthropic_module

    kept_blocks = anthropic_module._KEPT_BLOCKS
    monkeypatch.setattr(anthropic_module, "_KEPT_BLOCKS", kept_blocks - {"thinking"})
    harness.allow("record")
    harness.server.script(Response.of(Thinking(THOUGHT), tool("record", {"value": "a"})),
                          Response.text("Done."))
    await harness.session().run("record a")
    failed = harness.last()
    assert isinstance(failed, RunFailed) and failed.error is ProviderBadRequest
    assert "thinking" in failed.message
    assert harness.server.pending == 1


async def test_thinking_streams_live_before_the_answer(harness: Harness,
                                                       thinking_on: dict[str, Any]) -> None:
    from app.core.agent.events import TextDelta, ThinkingBlock, ThinkingDelta

    harness.server.script(Response.of(Thinking(THOUGHT), Text("The answer.")))
    await harness.session().run("think")
    live = "".join(e.text for e in harness.of(ThinkingDelta))
    assert live == THOUGHT
    kinds = [type(e) for e in harness.events
             if isinstance(e, ThinkingDelta | TextDelta | ThinkingBlock)]
    assert kinds.index(ThinkingDelta) < kinds.index(TextDelta) < kinds.index(ThinkingBlock)
    assert harness.text() == "The answer."  # never part of the answer's text
