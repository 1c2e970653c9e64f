"""Edit and resend, regenerate, and compaction, against the loopback Messages API: what the
model is sent afterwards, what stays stored, and what happens when it cannot be done."""

from __future__ import annotations

import asyncio

import pytest

from app.core.agent.compaction import (
    MARKER_TYPE,
    SUMMARY_INTRO,
    CompactionError,
    context_window,
    is_context_overflow,
    marker_of,
)
from app.core.agent.events import ApprovalResponse, RunFailed, RunFinished, UsageUpdated
from app.core.store.audit import AuditRepository
from app.core.store.conversations import ConversationRepository
from tests.fakes.anthropic_server import Response
from tests.unit.agent.helpers import Harness

TOO_LONG = "prompt is too long: 210000 tokens > 200000 maximum"


def _texts(message: dict) -> list[str]:
    return [b["text"] for b in message["content"] if b.get("type") == "text"]


async def _two_prompts(harness: Harness):
    """A conversation: "first" (answered after a tool call), then "second" (answered)."""
    harness.allow("record")
    harness.server.script(Response.tool_use("record", {"value": "1"}, id="toolu_1",
                                            text="Recording."),
                          Response.text("Recorded."), Response.text("Second answer."))
    session = harness.session()
    await session.run("first")
    await session.run("second")
    return session


async def test_resend_from_a_prompt_forks_the_conversation(harness: Harness) -> None:
    session = await _two_prompts(harness)
    harness.server.script(Response.text("Forked answer."), Response.text("Next."))
    await session.resend_from(0, "first, edited")
    assert harness.server.last_request.messages == [
        {"role": "user", "content": [{"type": "text", "text": "first, edited"}]}]
    assert harness.stored(session.conversation_id) == [
        {"role": "user", "content": [{"type": "text", "text": "first, edited"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Forked answer."}]}]
    # The tool call that ran is history: its audit row stays.
    assert [e.tool_use_id for e in harness.audit()] == ["toolu_1"]
    # The in-memory history was cut too: the next turn builds on the fork only.
    await session.run("third")
    assert [_texts(m) for m in harness.server.last_request.messages] == [
        ["first, edited"], ["Forked answer."], ["third"]]


async def test_editing_the_first_prompt_retitles_unless_the_person_renamed(
        harness: Harness) -> None:
    from app.core.store.conversations import ConversationRepository

    conversations = ConversationRepository(harness.db)
    session = await _two_prompts(harness)
    assert session.conversation_id is not None
    assert conversations.get(session.conversation_id).title == "first"
    harness.server.script(Response.text("Forked."), Response.text("Again."))
    await session.resend_from(0, "a better first line\nmore")
    assert conversations.get(session.conversation_id).title == "a better first line"
    await session.resend_from(-1, "not the first prompt? it is the only one")  # still first
    assert conversations.get(session.conversation_id).title.startswith("not the first")
    conversations.rename(session.conversation_id, "My own title")
    harness.server.script(Response.text("Once more."))
    await session.resend_from(0, "edited again")
    assert conversations.get(session.conversation_id).title == "My own title"


async def test_resend_from_the_last_prompt_keeps_what_came_before(harness: Harness) -> None:
    session = await _two_prompts(harness)
    harness.server.script(Response.text("Better second answer."))
    await session.resend_from(-1, "second, edited")
    messages = harness.server.last_request.messages
    assert _texts(messages[-1]) == ["second, edited"]
    assert messages[1]["content"][1]["id"] == "toolu_1"  # the first turn's call is kept
    assert len(harness.stored(session.conversation_id)) == 6


async def test_regenerate_removes_the_last_answer_with_its_tools(harness: Harness) -> None:
    harness.allow("record")
    harness.server.script(Response.text("Hello."),
                          Response.tool_use("record", {"value": "2"}, id="toolu_2"),
                          Response.text("Done with the tool."), Response.text("Regenerated."))
    session = harness.session()
    await session.run("hi")
    await session.run("use the tool")
    await session.regenerate()
    assert [_texts(m) for m in harness.server.last_request.messages] == [
        ["hi"], ["Hello."], ["use the tool"]]
    stored = harness.stored(session.conversation_id)
    assert [m["role"] for m in stored] == ["user", "assistant", "user", "assistant"]
    assert stored[-1]["content"] == [{"type": "text", "text": "Regenerated."}]
    assert [e.tool_use_id for e in harness.audit()] == ["toolu_2"]
    assert isinstance(harness.last(), RunFinished)


async def test_forks_without_a_conversation_or_a_prompt_fail_clearly(harness: Harness) -> None:
    session = harness.session()
    await session.regenerate()
    failure = harness.last()
    assert isinstance(failure, RunFailed) and "no messages yet" in failure.message
    harness.server.script(Response.text("Hello."))
    await session.run("hi")
    await session.resend_from(5, "nope")
    failure = harness.last()
    assert isinstance(failure, RunFailed) and "no longer in this conversation" in failure.message
    assert len(harness.server.message_requests) == 1  # nothing was sent for either
    with pytest.raises(ValueError):
        await session.resend_from(0, "  ")


async def test_no_fork_while_a_run_is_going(harness: Harness) -> None:
    harness.server.script(Response.tool_use("record", {"value": "x"}, id="toolu_h"),
                          Response.text("after"))
    harness.approver.then("hang")
    session = harness.session()
    run = asyncio.ensure_future(session.run("wait for me"))
    while not harness.approver.requests:
        await asyncio.sleep(0.005)
    with pytest.raises(RuntimeError):
        await session.regenerate()
    with pytest.raises(RuntimeError):
        await session.resend_from(0, "other")
    with pytest.raises(RuntimeError):
        await session.compact()
    session.cancel()
    await run


async def test_compaction_sends_the_summary_from_then_on_and_after_a_reload(
        harness: Harness) -> None:
    session = await _two_prompts(harness)
    harness.server.script(Response.text("They recorded 1 and asked a second question."))
    result = await session.compact()
    summary_request = harness.server.last_request.body
    assert "tools" not in summary_request or not summary_request["tools"]
    (only,) = summary_request["messages"]
    text = only["content"][0]["text"]
    assert "first" in text and "[tool call record" in text and "Second answer." in text
    assert result.summarised == 6 and result.summary.startswith("They recorded")
    # Stored: nothing deleted, a marker appended.
    stored = harness.stored(session.conversation_id)
    assert len(stored) == 7 and marker_of(stored[-1]["content"])["type"] == MARKER_TYPE
    # Usage of the summary request counts.
    assert len(harness.of(UsageUpdated)) == 4

    harness.server.script(Response.text("Continuing."), Response.text("Again."))
    await session.run("go on")
    sent = harness.server.last_request.messages
    assert len(sent) == 1 and sent[0]["role"] == "user"
    assert _texts(sent[0]) == [SUMMARY_INTRO + result.summary, "go on"]

    again = harness.session(conversation_id=session.conversation_id)
    await again.run("and again")
    sent = harness.server.last_request.messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert _texts(sent[0]) == [SUMMARY_INTRO + result.summary, "go on"]


async def test_a_context_overflow_is_compacted_and_the_prompt_retried(harness: Harness) -> None:
    session = await _two_prompts(harness)
    harness.server.script(Response.error(400, message=TOO_LONG))
    await session.run("a very long question")
    failure = harness.last()
    assert isinstance(failure, RunFailed) and is_context_overflow(failure.message)
    # The summary request itself is too long once: it is sent again with shorter cuts.
    harness.server.script(Response.error(400, message=TOO_LONG), Response.text("Summary."),
                          Response.text("The answer."))
    await session.compact()
    summary_text = harness.server.last_request.messages[0]["content"][0]["text"]
    assert "a very long question" not in summary_text  # the unanswered prompt is kept
    await session.retry()
    assert [_texts(m) for m in harness.server.last_request.messages] == [
        [SUMMARY_INTRO + "Summary.", "a very long question"]]
    assert isinstance(harness.last(), RunFinished)


async def test_compaction_errors_change_nothing(harness: Harness) -> None:
    session = harness.session()
    with pytest.raises(CompactionError):
        await session.compact()
    session = await _two_prompts(harness)
    harness.server.script(Response.error(500))
    with pytest.raises(CompactionError, match="summary request failed"):
        await session.compact()
    harness.server.script(Response.text(""))
    with pytest.raises(CompactionError, match="empty summary"):
        await session.compact()
    assert len(harness.stored(session.conversation_id)) == 6  # no marker
    harness.server.script(Response.text("S."))
    await session.compact()
    with pytest.raises(CompactionError, match="nothing new"):
        await session.compact()
    assert not session.running


async def test_editing_a_prompt_before_a_compaction_sends_the_full_history(
        harness: Harness) -> None:
    session = await _two_prompts(harness)
    harness.server.script(Response.text("Summary."), Response.text("Redone."))
    await session.compact()
    await session.resend_from(1, "second, edited")
    sent = harness.server.last_request.messages
    assert _texts(sent[0]) == ["first"] and _texts(sent[-1]) == ["second, edited"]
    stored = ConversationRepository(harness.db).messages(session.conversation_id)
    assert not any(marker_of(m.content) for m in stored)
    assert AuditRepository(harness.db).for_conversation(session.conversation_id)


def test_context_windows_and_overflow_messages() -> None:
    assert context_window("claude-sonnet-4-5") == 200_000
    assert context_window("some-local-model") == 128_000
    assert is_context_overflow("This model's maximum context length is 8192 tokens")
    assert is_context_overflow(TOO_LONG)
    assert not is_context_overflow("Overloaded")


async def test_approval_answers_are_not_needed_for_forks(harness: Harness) -> None:
    """A regenerated turn asks for approval again like any turn (the old answer was not
    remembered by the fork)."""
    harness.server.script(Response.tool_use("record", {"value": "a"}, id="toolu_a"),
                          Response.text("ok"),
                          Response.tool_use("record", {"value": "a"}, id="toolu_b"),
                          Response.text("ok again"))
    harness.approver.then(ApprovalResponse(approved=True), ApprovalResponse(approved=True))
    session = harness.session()
    await session.run("record a")
    await session.regenerate()
    assert [r.tool_use_id for r in harness.approver.requests] == ["toolu_a", "toolu_b"]
    assert harness.record.calls == [{"value": "a"}, {"value": "a"}]


async def test_a_new_prompt_after_a_failed_one_replaces_it_never_joins_it(
        harness: Harness) -> None:
    harness.server.script(Response.error(400, message="bad request"))
    session = harness.session()
    await session.run("first, which fails")
    harness.server.script(Response.text("Answer."))
    await session.run("second")
    assert harness.server.last_request.messages == [
        {"role": "user", "content": [{"type": "text", "text": "second"}]}]
    # A reopened conversation does not join them either.
    harness.server.script(Response.text("More."))
    again = harness.session(conversation_id=session.conversation_id)
    await again.run("third")
    assert [_texts(m) for m in harness.server.last_request.messages] == [
        ["second"], ["Answer."], ["third"]]
