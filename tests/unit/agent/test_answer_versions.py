"""Regenerate keeps the old answer as a version ("‹ 1/2 ›"); showing a version makes it the
conversation's answer in the store and in what the next request sends, also after a reload;
editing the prompt drops its versions."""

from __future__ import annotations

from app.core.store.answer_versions import AnswerVersionRepository
from tests.fakes.anthropic_server import Response
from tests.unit.agent.helpers import Harness


def _texts(message: dict) -> list[str]:
    return [b["text"] for b in message["content"] if b.get("type") == "text"]


async def test_regenerate_keeps_versions_and_showing_one_continues_from_it(
        harness: Harness) -> None:
    harness.allow("record")
    harness.server.script(
        Response.tool_use("record", {"value": "1"}, id="toolu_1", text="Recording."),
        Response.text("First answer."), Response.text("Second answer."),
        Response.text("Third answer."), Response.text("Next."))
    session = harness.session()
    await session.run("question")
    assert await session.forking.versions() is None
    await session.regenerate()
    assert await session.forking.versions() == (1, 2)
    await session.regenerate()
    assert await session.forking.versions() == (2, 3)

    # The first answer (with its tool call and result) back: stored, and sent next time.
    assert await session.forking.show_version(0)
    assert await session.forking.versions() == (0, 3)
    stored = harness.stored(session.conversation_id)
    assert [m["role"] for m in stored] == ["user", "assistant", "user", "assistant"]
    assert stored[1]["content"][1]["id"] == "toolu_1"
    assert _texts(stored[-1]) == ["First answer."]
    assert not await session.forking.show_version(7)

    # A reloaded session sees the same versions and continues from the one shown.
    reloaded = harness.session(session.conversation_id)
    assert await reloaded.forking.versions() == (0, 3)
    await reloaded.run("go on")
    sent = [_texts(m) for m in harness.server.last_request.messages]
    assert sent == [["question"], ["Recording."], [], ["First answer."], ["go on"]]
    assert await reloaded.forking.versions() is None  # the last prompt is "go on" now


async def test_versions_go_with_their_prompt_when_it_is_edited(harness: Harness) -> None:
    harness.server.script(Response.text("One."), Response.text("Two."),
                          Response.text("Edited."))
    session = harness.session()
    await session.run("question")
    await session.regenerate()
    assert await session.forking.versions() == (1, 2)
    await session.resend_from(0, "another question")
    assert await session.forking.versions() is None
    repo = AnswerVersionRepository(session.db)
    with repo.store.lock:
        left = repo.db.conn.execute("SELECT count(*) FROM answer_versions").fetchone()[0]
    assert left == 0


async def test_resending_an_unanswered_prompt_makes_no_version(harness: Harness) -> None:
    harness.server.script(Response.error(500, "api_error", "down"), Response.text("Now."))
    session = harness.session()
    await session.run("question")
    await session.regenerate()
    assert await session.forking.versions() is None
    assert _texts(harness.stored(session.conversation_id)[-1]) == ["Now."]
