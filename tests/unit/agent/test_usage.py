"""Token usage per turn: recorded with the conversation, summed per conversation and day, and
priced from the table (the shipped prices, with the person's edits over them)."""

from __future__ import annotations

import pytest

from app.core.agent.events import UsageUpdated
from app.core.pricing import (
    DEFAULT_PRICES,
    ModelPrice,
    Usage,
    cost,
    price_for,
    prices_from_setting,
)
from app.core.store.usage import UsageRepository
from tests.fakes.anthropic_server import Response, tool
from tests.unit.agent.helpers import Harness


def test_cost_prices_cache_writes_and_reads():
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000,
                  cache_write_tokens=1_000_000, cache_read_tokens=1_000_000)
    # sonnet: $3 in, $15 out; writes 1.25× (5 minutes) or 2× (1 hour), reads 0.1×.
    assert cost("claude-sonnet-5-5", usage) == pytest.approx(3 + 15 + 3.75 + 0.3)
    assert cost("claude-sonnet-5-5", usage, cache_ttl="1h") == pytest.approx(3 + 15 + 6 + 0.3)
    assert cost("gpt-oss:20b", usage) is None  # unknown: no price, not zero


def test_the_longest_matching_prefix_prices_a_model():
    assert price_for("claude-opus-4-1-20250805") == DEFAULT_PRICES["claude-opus-4-1"]
    assert price_for("claude-opus-4-5") == DEFAULT_PRICES["claude-opus"]
    table = prices_from_setting({"claude-sonnet-5": [2.0, 10.0], "bad": "x", "": [1, 1],
                                 "neg": [-1, 2]})
    assert price_for("claude-sonnet-5-5", table) == ModelPrice(2.0, 10.0)
    assert "bad" not in table and "neg" not in table


async def test_each_turn_is_recorded_and_summed(harness: Harness) -> None:
    harness.allow("record")
    harness.server.script(Response.tools(tool("record", {"value": "a"})), Response.text("ok"))
    session = harness.session()
    await session.run("go")
    updates = harness.of(UsageUpdated)
    assert len(updates) == 2
    model = harness.profile().model
    total = updates[-1].conversation[model]
    assert total == updates[0].turn + updates[1].turn
    assert total.input_tokens > 0 and total.output_tokens > 0
    stored = UsageRepository(harness.db).for_conversation(session.conversation_id)
    assert stored == {model: total}
    # A reopened conversation starts from the stored totals.
    again = harness.session(conversation_id=session.conversation_id)
    assert again.conversation_usage() == {model: total}
    days = UsageRepository(harness.db).per_day()
    assert [(m, u) for _day, m, u in days] == [(model, total)]
