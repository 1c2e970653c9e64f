"""Stop: during the stream, during a tool, during an approval — and the conversation goes on."""

from __future__ import annotations

import asyncio
import time

import pytest

from app.core.agent.events import (
    AwaitingApproval,
    RunCancelled,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from app.core.agent.transcript import normalize
from tests.fakes.anthropic_server import Response, tool
from tests.unit.agent.helpers import Harness


def _every_tool_use_answered(messages: list[dict]) -> None:
    """The invariant the API enforces: each tool_use is answered in the very next message."""
    for i, msg in enumerate(messages):
        if msg["role"] != "assistant":
            continue
        ids = [b["id"] for b in msg["content"] if b["type"] == "tool_use"]
        if not ids:
            continue
        nxt = messages[i + 1]
        assert nxt["role"] == "user"
        answered = [b["tool_use_id"] for b in nxt["content"] if b["type"] == "tool_result"]
        assert answered == ids


def _wait_until(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


async def test_stop_during_the_stream(harness: Harness) -> None:
    words = " ".join(f"word{i}" for i in range(200))
    harness.server.script(Response.text(words, chunk_delay_s=0.02))
    session = harness.session()
    harness.on_event_hook = lambda e: session.cancel() if isinstance(e, TextDelta) and \
        len(harness.of(TextDelta)) == 3 else None

    await session.run("talk a lot")  # returns normally: Stop is not an error

    assert isinstance(harness.last(), RunCancelled)
    assert harness.names()[-1] == "RunCancelled"
    assert not session.running
    shown = harness.text()
    assert shown.startswith("word0 word1 word2") and len(shown) < len(words)
    stored = harness.stored(session.conversation_id)
    assert stored[-1] == {"role": "assistant", "content": [{"type": "text", "text": shown}]}
    # the connection was really closed, not drained in the background
    assert _wait_until(lambda: harness.server.disconnects >= 1)
    assert harness.server.completed_streams == 0

    harness.server.script(Response.text("Continuing."))
    await session.run("go on")
    req = harness.server.last_request
    assert [m["role"] for m in req.messages] == ["user", "assistant", "user"]
    assert req.messages[1]["content"][0]["text"] == shown
    assert harness.text().endswith("Continuing.")


async def test_stop_during_a_tool_cancels_it(harness: Harness) -> None:
    harness.allow("slow")
    harness.allow("record")
    harness.server.script(Response.tools(tool("slow", {}, id="toolu_slow"),
                                         tool("record", {"value": "later"}, id="toolu_rec")))
    session = harness.session()

    async def stop_soon() -> None:
        await asyncio.sleep(0.05)
        session.cancel()

    harness.on_event_hook = lambda e: asyncio.ensure_future(stop_soon()) \
        if isinstance(e, ToolStarted) else None
    await session.run("do slow work")

    assert harness.slow.started and harness.slow.cancelled and not harness.slow.finished
    assert harness.record.calls == []  # the call after the stopped one never runs
    assert isinstance(harness.last(), RunCancelled)
    first, second = harness.of(ToolFinished)
    assert (first.tool_use_id, first.outcome, first.is_error) == ("toolu_slow", "cancelled", True)
    assert first.duration_ms >= 40
    assert (second.tool_use_id, second.outcome) == ("toolu_rec", "cancelled")
    stored = harness.stored(session.conversation_id)
    _every_tool_use_answered(stored)
    results = stored[-1]["content"]
    assert "stopped the run while slow was running" in results[0]["content"]
    assert "Not run" in results[1]["content"]
    assert [(a.tool_name, a.outcome) for a in harness.audit()] == [("slow", "cancelled"),
                                                                    ("record", "cancelled")]
    # the conversation continues: the next request carries both results
    harness.server.script(Response.text("ok"))
    await session.run("never mind")
    _every_tool_use_answered(harness.server.last_request.messages)


async def test_stop_during_approval_declines(harness: Harness) -> None:
    harness.approver.then("hang")
    harness.server.script(Response.tools(tool("record", {"value": "x"}, id="toolu_1"),
                                         tool("record", {"value": "y"}, id="toolu_2")))
    session = harness.session()
    harness.on_event_hook = lambda e: session.cancel() if isinstance(e, AwaitingApproval) else None

    await session.run("go")

    assert harness.record.calls == []
    assert harness.approver.cancelled == 1  # the dialog's await was cancelled: it can close
    assert isinstance(harness.last(), RunCancelled)
    first, second = harness.of(ToolFinished)
    assert (first.outcome, first.is_error) == ("declined", True)
    assert "before approving" in first.content
    assert second.outcome == "cancelled"
    _every_tool_use_answered(harness.stored(session.conversation_id))
    assert [a.outcome for a in harness.audit()] == ["declined", "cancelled"]


async def test_cancel_when_idle_is_harmless(harness: Harness) -> None:
    session = harness.session()
    session.cancel()
    harness.server.script(Response.text("hi"))
    await session.run("hello")
    assert harness.last().stop_reason == "end_turn"


async def test_cancelling_the_callers_task_propagates(harness: Harness) -> None:
    harness.allow("slow")
    harness.server.script(Response.tool_use("slow", {}))
    session = harness.session()
    task = asyncio.ensure_future(session.run("go"))
    while not harness.slow.started:
        await asyncio.sleep(0.01)
    task.cancel()  # e.g. the app quitting: the caller's task must end cancelled
    with pytest.raises(asyncio.CancelledError):
        await task
    assert harness.slow.cancelled
    assert isinstance(harness.last(), RunCancelled)
    _every_tool_use_answered(harness.stored(session.conversation_id))


async def test_a_second_run_while_running_is_refused(harness: Harness) -> None:
    harness.allow("slow")
    harness.server.script(Response.tool_use("slow", {}))
    session = harness.session()
    task = asyncio.ensure_future(session.run("go"))
    while not harness.slow.started:
        await asyncio.sleep(0.01)
    with pytest.raises(RuntimeError):
        await session.run("again")
    session.cancel()
    await task
    assert isinstance(harness.last(), RunCancelled)


def test_normalize_keeps_a_stopped_transcript_valid() -> None:
    history = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x",
                                           "input": {}}]},
    ]
    out = normalize(history)
    _every_tool_use_answered(out)
    assert out[-1]["content"][0]["is_error"] is True


async def test_stop_while_the_checkpoint_is_taken_says_the_user_stopped(
        harness: Harness, fresh_data_dir) -> None:
    """A Stop that lands while the call's before-checkpoint is taken is the person's Stop, not
    'an internal error': the model and the audit must read what happened."""
    from app.core.agent.checkpointing import Checkpointer

    class StopsDuringSnapshot(Checkpointer):
        async def snapshot(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            session.cancel()
            await asyncio.sleep(0)  # the cancellation lands here
            return await super().snapshot(*args, **kwargs)

    harness.allow("write_file")
    harness.enable("write_file", allowed_write_dirs=["."])
    harness.server.script(Response.tools(
        tool("write_file", {"path": "a.txt", "content": "x"}, id="toolu_w")))
    session = harness.session(checkpointer=StopsDuringSnapshot(fresh_data_dir, harness.project))
    await session.run("write a file")

    assert isinstance(harness.last(), RunCancelled)
    assert not (harness.project / "a.txt").exists()
    stored = harness.stored(session.conversation_id)
    _every_tool_use_answered(stored)
    answer = stored[-1]["content"][0]["content"]
    assert "internal error" not in answer, answer
    assert "stopped" in answer
    assert [a.outcome for a in harness.audit()] == ["cancelled"]
