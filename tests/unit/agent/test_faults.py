"""API faults end as one clear RunFailed event, the conversation intact and retry possible."""

from __future__ import annotations

import pytest

from app.core.agent.events import RunFailed, RunFinished, TextDelta
from app.core.agent.models import (
    InternalError,
    ProviderAuthError,
    ProviderBadRequest,
    ProviderConnectionError,
    ProviderError,
    ProviderOverloaded,
    ProviderRateLimited,
    ProviderServerError,
)
from tests.fakes.anthropic_server import Response, tool
from tests.unit.agent.helpers import Harness

FAULTS = [
    # (script, error class, retryable, requests the SDK makes with max_retries=2, words in
    # message)
    pytest.param([Response.error(401)], ProviderAuthError, False, 1, "invalid x-api-key",
                 id="401"),
    pytest.param([Response.error(403)], ProviderAuthError, False, 1, "permission", id="403"),
    pytest.param([Response.error(429)] * 3, ProviderRateLimited, True, 3, "rate limit",
                 id="429"),
    pytest.param([Response.error(529)] * 3, ProviderOverloaded, True, 3, "Overloaded",
                 id="529"),
    pytest.param([Response.error(500)] * 3, ProviderServerError, True, 3,
                 "Internal server error", id="500"),
    pytest.param([Response.error(503)] * 3, ProviderServerError, True, 3, "503", id="503"),
    pytest.param([Response.error(400, message="max_tokens: too large")], ProviderBadRequest,
                 False, 1, "max_tokens: too large", id="400"),
    pytest.param([Response.text("never finished " * 20, drop_after=6)],
                 ProviderConnectionError, True, 1, "cut off", id="dropped-stream"),
    pytest.param([Response.text("overload mid-stream " * 20, error_after=6)],
                 ProviderOverloaded, True, 1, "Overloaded", id="error-event-mid-stream"),
]


@pytest.mark.parametrize(("script", "error", "retryable", "attempts", "words"), FAULTS)
async def test_fault_ends_as_run_failed_and_retry_recovers(
        harness: Harness, script: list[Response], error: type[ProviderError], retryable: bool,
        attempts: int, words: str) -> None:
    harness.max_retries = 2
    harness.server.script(*script)
    session = harness.session()

    await session.run("hello")  # never raises for API errors

    failed = harness.last()
    assert isinstance(failed, RunFailed), harness.names()
    assert (failed.error, failed.retryable) == (error, retryable)
    assert words.lower() in failed.message.lower()
    assert TEST_SECRET not in failed.message
    assert len(harness.server.message_requests) == attempts
    assert session.last_failure == failed
    # intact: the person's message is kept, no half answer is stored
    stored = harness.stored(session.conversation_id)
    assert stored == [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]

    harness.server.script(Response.text("Recovered."))
    await session.retry()
    assert harness.last() == RunFinished("end_turn", 1, 12, harness.last().output_tokens)
    retried = harness.server.last_request
    assert retried.messages == [{"role": "user", "content": [{"type": "text",
                                                              "text": "hello"}]}]
    assert [m["role"] for m in harness.stored(session.conversation_id)] == ["user", "assistant"]


TEST_SECRET = "sk-ant-test-0123456789"


async def test_dropped_stream_after_tool_results_retries_from_the_results(
        harness: Harness) -> None:
    harness.allow("record")
    harness.server.script(Response.tool_use("record", {"value": "1"}),
                          Response.text("partial answer " * 10, drop_after=5))
    session = harness.session()
    await session.run("go")
    assert isinstance(harness.last(), RunFailed)
    assert harness.record.calls == [{"value": "1"}]
    # the partial text was shown, but is not stored: the retry regenerates it
    assert harness.of(TextDelta)
    assert [m["role"] for m in harness.stored(session.conversation_id)] == [
        "user", "assistant", "user"]

    harness.server.script(Response.text("Full answer."))
    await session.retry()
    assert harness.record.calls == [{"value": "1"}]  # the tool does not run again
    assert harness.server.last_request.tool_results()[0]["content"] == "recorded 1"
    assert harness.last().stop_reason == "end_turn"


async def test_retry_with_nothing_to_retry(harness: Harness) -> None:
    harness.server.script(Response.text("done"))
    session = harness.session()
    await session.run("hi")
    await session.retry()
    failed = harness.last()
    assert isinstance(failed, RunFailed) and failed.retryable is False
    assert len(harness.server.message_requests) == 1


async def test_malformed_json_in_the_stream_is_a_server_error(harness: Harness) -> None:
    # A tool_use cut off by max_tokens: the input JSON is incomplete.
    harness.allow("record")
    harness.server.script(Response.of(tool("record", raw_json='{"value": "abc'),
                                      stop_reason="max_tokens"),
                          Response.text("ok"))
    await harness.session().run("go")
    (result,) = harness.server.last_request.tool_results()
    assert result["is_error"] and "max_tokens" in result["content"]
    assert harness.record.calls == []


async def test_unscripted_request_fails_loudly(harness: Harness) -> None:
    await harness.session().run("hi")
    failed = harness.last()
    assert isinstance(failed, RunFailed) and "no scripted response" in failed.message
    assert harness.server.unscripted == 1


async def test_an_internal_error_ends_visibly_with_a_consistent_transcript(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    harness.server.script(Response.tools(tool("record", {"value": "1"}),
                                         tool("record", {"value": "2"})))

    def broken(*args: object) -> None:
        raise RuntimeError("rule index corrupted")

    monkeypatch.setattr(harness.permissions, "decide", broken)
    session = harness.session()
    await session.run("go")
    failed = harness.last()
    assert isinstance(failed, RunFailed) and failed.error is InternalError
    assert "rule index corrupted" in failed.message
    assert harness.record.calls == []
    stored = harness.stored(session.conversation_id)
    assert [b["type"] for b in stored[-1]["content"]] == ["tool_result", "tool_result"]

    monkeypatch.undo()
    harness.server.script(Response.text("ok"))
    await session.retry()
    assert harness.last().stop_reason == "end_turn"
