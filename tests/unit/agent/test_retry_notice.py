"""A request that waits before a retry (a 429) tells the run, which shows a countdown instead
of going silent."""

from __future__ import annotations

from app.core.agent.events import RetryWaiting, TextDelta
from tests.fakes.anthropic_server import Response
from tests.unit.agent.helpers import Harness


async def test_a_429_wait_is_announced_before_the_answer(harness: Harness,
                                                         waits: list[float]) -> None:
    harness.max_retries = 2
    harness.server.script(Response.error(429, retry_after_ms=1500), Response.text("Hi."))
    await harness.session().run("hello")
    assert waits == [1.5]
    notices = harness.of(RetryWaiting)
    assert notices == [RetryWaiting(1.5, "rate limited")]
    order = [type(e) for e in harness.events if isinstance(e, RetryWaiting | TextDelta)]
    assert order[0] is RetryWaiting
