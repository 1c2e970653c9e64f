"""Prompt caching: breakpoints on the tools, the system prompt and the transcript's end, a prefix
that stays byte-stable between turns, and usage from the fake's cache rules."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from app.core.agent.events import RunFinished
from app.core.agent.models import ModelRequest
from app.core.agent.models.anthropic import AnthropicProvider, _TurnAccumulator
from app.core.agent.models.anthropic_request import MAX_BREAKPOINTS, request_body
from app.core.agent.request_options import request_options
from tests.fakes.anthropic_server import (
    CACHE_LOOKBACK,
    FakeAnthropicServer,
    RecordedRequest,
    Response,
    prompt_elements,
    tool,
)
from tests.unit.agent.helpers import TEST_KEY, Harness

# Long enough that the cached prefix dominates the request, as a real system prompt does.
BIG_SYSTEM = "You are a careful engineer. " * 400   # ~11k characters, ~2.8k fake tokens
EPHEMERAL = {"type": "ephemeral"}


def breakpoints(body: dict[str, Any]) -> list[tuple[str, Any]]:
    """Where a request's cache_control markers are: ("tool", name), ("system", i) or
    ("message", (i, j)), in the API's order."""
    found: list[tuple[str, Any]] = []
    for t in body.get("tools") or []:
        if "cache_control" in t:
            found.append(("tool", t["name"]))
    system = body.get("system")
    for i, block in enumerate(system if isinstance(system, list) else []):
        if "cache_control" in block:
            found.append(("system", i))
    for i, message in enumerate(body["messages"]):
        content = message["content"]
        for j, block in enumerate(content if isinstance(content, list) else []):
            if "cache_control" in block:
                found.append(("message", (i, j)))
    return found


def assert_prefix_stable(requests: list[RecordedRequest]) -> None:
    """Each request's whole prompt (tools, system, messages; cache markers aside) is,
    byte for byte, the start of the next one's: nothing before the new turn changed."""
    for n in range(1, len(requests)):
        before, after = prompt_elements(requests[n - 1].wire), prompt_elements(requests[n].wire)
        old, new = [text for text, _ in before], [text for text, _ in after]
        for k, text in enumerate(old):
            assert k < len(new) and new[k] == text, (
                f"request {n} changed the prefix of request {n - 1} at element {k}:\n"
                f"  was: {text[:200]}\n  now: {new[k][:200] if k < len(new) else '(gone)'}")


def tool_loop_script(n: int) -> list[Response]:
    return ([Response.tool_use("record", {"value": str(i)}, text=f"Step {i}.")
             for i in range(n)] + [Response.text("Done.")])


# -- the request ------------------------------------------------------------------------------


def _body(request: ModelRequest) -> dict[str, Any]:
    return json.loads(request_body(request))


def _transcript() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"},
                                          {"type": "tool_use", "id": "t1", "name": "a",
                                           "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "r1"}]},
    ]


TOOLS = [{"name": "a", "description": "A.", "input_schema": {"type": "object"}},
         {"name": "b", "description": "B.", "input_schema": {"type": "object"}}]


def test_breakpoints_on_last_tool_system_and_transcript_end() -> None:
    messages = _transcript()
    body = _body(ModelRequest("m", messages, 100, system="Sys.", tools=TOOLS))
    assert breakpoints(body) == [("tool", "b"), ("system", 0), ("message", (0, 0)),
                                 ("message", (2, 0))]
    assert body["system"] == [{"type": "text", "text": "Sys.", "cache_control": EPHEMERAL}]
    assert body["tools"][1]["cache_control"] == EPHEMERAL
    assert "cache_control" not in body["tools"][0]


@pytest.mark.parametrize("system", ["", "Sys."])
@pytest.mark.parametrize("tools", [[], TOOLS])
@pytest.mark.parametrize("shape", ["one", "loop", "str", "thinking-last", "assistant-last"])
def test_never_more_than_four_breakpoints_and_the_transcript_is_not_modified(
        system: str, tools: list[dict[str, Any]], shape: str) -> None:
    messages = {
        "one": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "loop": _transcript() * 3,
        "str": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"},
                {"role": "user", "content": "again"}],
        "thinking-last": [{"role": "user", "content": "hi"},
                          {"role": "assistant", "content": [
                              {"type": "thinking", "thinking": "x", "signature": "s"}]}],
        "assistant-last": _transcript()[:2],
    }[shape]
    pristine, pristine_tools = copy.deepcopy(messages), copy.deepcopy(tools)
    body = _body(ModelRequest("m", messages, 100, system=system, tools=tools))
    marks = breakpoints(body)
    assert 1 <= len(marks) <= MAX_BREAKPOINTS
    assert ("message", (len(messages) - 1, 0)) in marks or shape in ("thinking-last",
                                                                     "assistant-last")
    for _, where in marks:  # never on a thinking block (the API rejects that)
        if isinstance(where, tuple):
            i, j = where
            assert body["messages"][i]["content"][j]["type"] not in ("thinking",
                                                                     "redacted_thinking")
    assert messages == pristine  # the stored transcript never carries cache_control
    assert tools == pristine_tools


def test_one_hour_ttl_marks_every_breakpoint() -> None:
    body = _body(ModelRequest("m", _transcript(), 100, system="Sys.", tools=TOOLS,
                              cache_ttl="1h"))
    marks = [body["tools"][1]["cache_control"], body["system"][0]["cache_control"],
             body["messages"][2]["content"][0]["cache_control"]]
    assert marks == [{"type": "ephemeral", "ttl": "1h"}] * 3


def test_cache_off_sends_no_breakpoints_and_the_plain_system_string() -> None:
    body = _body(ModelRequest("m", _transcript(), 100, system="Sys.", tools=TOOLS, cache=False))
    assert breakpoints(body) == []
    assert body["system"] == "Sys."


def test_usage_is_read_from_message_start_and_cumulative_message_delta() -> None:
    acc = _TurnAccumulator(lambda text: None)
    acc.feed("message_start", json.dumps({"type": "message_start", "message": {"usage": {
        "input_tokens": 5, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 900,
        "output_tokens": 1}}}))
    acc.feed("message_delta", json.dumps({"type": "message_delta",
                                          "delta": {"stop_reason": "end_turn"},
                                          "usage": {"output_tokens": 7,
                                                    "cache_read_input_tokens": 950}}))
    acc.feed("message_stop", json.dumps({"type": "message_stop"}))
    turn = acc.finish()
    assert (turn.input_tokens, turn.cache_creation_input_tokens, turn.cache_read_input_tokens,
            turn.output_tokens) == (5, 100, 950, 7)


def test_request_options_read_the_profile_only_where_it_has_them() -> None:
    assert request_options(SimpleNamespace()) == {
        "thinking": "off", "thinking_display": None, "effort": None, "cache": True,
        "cache_ttl": "5m"}
    profile = SimpleNamespace(thinking="adaptive", thinking_display="omitted", effort="high",
                              cache_ttl="1h", prompt_cache=False)
    assert request_options(profile) == {
        "thinking": "adaptive", "thinking_display": "omitted", "effort": "high",
        "cache": False, "cache_ttl": "1h"}
    odd = SimpleNamespace(thinking="always", thinking_display="loud", effort="extreme",
                          cache_ttl="1d")
    assert request_options(odd) == {
        "thinking": "off", "thinking_display": None, "effort": None, "cache": True,
        "cache_ttl": "5m"}


# -- the tool loop against the fake's cache ------------------------------------------------------


async def test_tool_loop_places_breakpoints_and_keeps_the_prefix_byte_stable(
        harness: Harness) -> None:
    harness.allow("record")
    harness.update_profile(system_prompt="Be careful.")
    harness.server.script(*tool_loop_script(3))
    session = harness.session()
    await session.run("go")
    harness.server.script(Response.text("Again."))
    await session.run("and again")  # a second run continues the same prefix

    requests = harness.server.message_requests
    assert len(requests) == 5
    for n, req in enumerate(requests):
        marks = breakpoints(req.wire)
        assert len(marks) <= MAX_BREAKPOINTS
        last = len(req.wire["messages"]) - 1
        assert marks[:2] == [("tool", req.wire["tools"][-1]["name"]), ("system", 0)]
        assert marks[-1] == ("message", (last, len(req.wire["messages"][last]["content"]) - 1))
        if n:  # and on the previous request's end: the entry it wrote
            assert marks[2] == ("message", (last - 2, len(
                req.wire["messages"][last - 2]["content"]) - 1))
    assert_prefix_stable(requests)
    # same tools, same order, same bytes, every turn
    tools = {json.dumps(r.wire["tools"]) for r in requests}
    assert len(tools) == 1
    assert [t["name"] for t in requests[0].wire["tools"]] == sorted(requests[0].tool_names)


def test_prefix_check_fails_when_a_tool_or_the_system_prompt_changes() -> None:
    """The stability check above can fail: a changed tool definition, a reordered schema or an
    edited system prompt between turns each break it."""
    first = json.loads(request_body(ModelRequest("m", _transcript()[:1], 100, system="Sys.",
                                                 tools=TOOLS)))
    good = json.loads(request_body(ModelRequest("m", _transcript(), 100, system="Sys.",
                                                tools=TOOLS)))

    def rec(body: dict[str, Any]) -> RecordedRequest:
        return RecordedRequest("POST", "/v1/messages", "", {}, body, b"", body)

    assert_prefix_stable([rec(first), rec(good)])
    edited_tool = copy.deepcopy(good)
    edited_tool["tools"][0]["description"] = "A, improved."
    reordered = copy.deepcopy(good)
    reordered["tools"][0] = {"input_schema": {"type": "object"}, "name": "a",
                             "description": "A."}  # same content, other key order
    swapped = copy.deepcopy(good)
    swapped["tools"] = [swapped["tools"][1], swapped["tools"][0]]
    edited_system = copy.deepcopy(good)
    edited_system["system"][0]["text"] = "Sys. Today is Tuesday."
    for changed in (edited_tool, reordered, swapped, edited_system):
        with pytest.raises(AssertionError, match="changed the prefix"):
            assert_prefix_stable([rec(first), rec(changed)])


async def test_second_turn_reads_most_of_its_prefix_from_the_cache(harness: Harness) -> None:
    harness.server.caching = True
    harness.allow("record")
    harness.update_profile(system_prompt=BIG_SYSTEM)
    harness.server.script(*tool_loop_script(2))
    session = harness.session()
    await session.run("go")

    first, second, third = harness.server.usages
    total = [u["input_tokens"] + u["cache_creation_input_tokens"]
             + u["cache_read_input_tokens"] for u in (first, second, third)]
    assert first["cache_read_input_tokens"] == 0
    assert first["cache_creation_input_tokens"] >= 0.95 * total[0]
    for usage, size in ((second, total[1]), (third, total[2])):
        assert usage["cache_read_input_tokens"] >= 0.9 * size
        assert usage["cache_read_input_tokens"] >= total[0]  # all of the turn before
        assert usage["input_tokens"] == 0  # everything up to the breakpoint is cached
    finished = harness.last()
    assert isinstance(finished, RunFinished)
    assert finished.cache_read_input_tokens == sum(u["cache_read_input_tokens"]
                                                   for u in harness.server.usages)
    assert finished.cache_creation_input_tokens == sum(u["cache_creation_input_tokens"]
                                                       for u in harness.server.usages)
    assert finished.input_tokens == sum(u["input_tokens"] for u in harness.server.usages)


async def test_a_changed_system_prompt_misses_the_cache(harness: Harness) -> None:
    """The fake's rule is exact: one changed byte in the system prompt and only the tools
    (before it) are read from the cache."""
    harness.server.caching = True
    harness.update_profile(system_prompt=BIG_SYSTEM)
    harness.server.script(Response.text("One."), Response.text("Two."))
    session = harness.session()
    await session.run("go")
    harness.update_profile(system_prompt=BIG_SYSTEM + "!")
    await session.run("again")

    first, second = harness.server.usages
    tools_only = sum(len(text) // 4 for text, _ in prompt_elements(
        harness.server.message_requests[1].wire) if text.startswith("tool:"))
    assert second["cache_read_input_tokens"] == tools_only
    # the system prompt and everything after it is written again
    assert second["cache_creation_input_tokens"] > len(BIG_SYSTEM) // 4
    assert first["cache_creation_input_tokens"] > tools_only + len(BIG_SYSTEM) // 4


async def test_a_turn_longer_than_the_lookback_still_reads_the_previous_turn(
        harness: Harness) -> None:
    """Twelve parallel calls add 25 blocks, more than the API looks back from one breakpoint;
    the breakpoint on the previous request's end still finds that entry."""
    harness.server.caching = True
    harness.allow("record")
    harness.update_profile(system_prompt=BIG_SYSTEM, max_iterations=5)
    calls = [tool("record", {"value": str(i)}) for i in range(12)]
    harness.server.script(Response.tools(*calls, text="Twelve."), Response.text("Done."))
    await harness.session().run("go")

    first, second = harness.server.usages
    new_blocks = len(prompt_elements(harness.server.message_requests[1].wire)) - len(
        prompt_elements(harness.server.message_requests[0].wire))
    assert new_blocks > CACHE_LOOKBACK
    whole_first = first["cache_creation_input_tokens"] + first["cache_read_input_tokens"] \
        + first["input_tokens"]
    assert second["cache_read_input_tokens"] == whole_first


# -- the fake's rules, at the HTTP level -----------------------------------------------------------


def _post(server: FakeAnthropicServer, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(server.base_url + "/v1/messages", json={**body, "stream": False},
                      headers={"x-api-key": TEST_KEY, "anthropic-version": "2023-06-01"})


def test_fake_rejects_a_fifth_breakpoint_and_one_hour_after_five_minutes(
        fake_anthropic: FakeAnthropicServer) -> None:
    cc = {"type": "ephemeral"}
    five = {"model": "m", "max_tokens": 10,
            "system": [{"type": "text", "text": f"s{i}", "cache_control": cc} for i in range(5)],
            "messages": [{"role": "user", "content": "hi"}]}
    resp = _post(fake_anthropic, five)
    assert resp.status_code == 400
    assert "maximum of 4 blocks with cache_control" in resp.json()["error"]["message"]
    mixed = {**five, "system": [{"type": "text", "text": "a", "cache_control": cc},
                                {"type": "text", "text": "b",
                                 "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}
    resp = _post(fake_anthropic, mixed)
    assert resp.status_code == 400 and "ttl='1h'" in resp.json()["error"]["message"]
    assert fake_anthropic.pending == 0 and fake_anthropic.unscripted == 0  # no script used


async def test_the_one_hour_cache_outlives_a_long_approval_wait(
        fake_anthropic: FakeAnthropicServer) -> None:
    """Six minutes between two turns (an approval dialog left open): the 5-minute entry has
    expired and is written again, the 1-hour one is read."""
    now = [1000.0]
    fake_anthropic.caching = True
    fake_anthropic.cache.clock = lambda: now[0]
    provider = AnthropicProvider(api_key=TEST_KEY, base_url=fake_anthropic.base_url,
                                 max_retries=0)
    try:
        for ttl in ("5m", "1h"):
            fake_anthropic.cache.clear()
            fake_anthropic.script(Response.text("a"), Response.text("b"))
            request = ModelRequest("claude-sonnet-4-5", _transcript(), 100,
                                   system=BIG_SYSTEM + ttl, tools=TOOLS, cache_ttl=ttl)
            first = await provider.stream(request, lambda t: None)
            now[0] += 6 * 60
            second = await provider.stream(request, lambda t: None)
            written = first.cache_creation_input_tokens
            assert written > 0 and first.cache_read_input_tokens == 0
            if ttl == "5m":
                assert (second.cache_read_input_tokens,
                        second.cache_creation_input_tokens) == (0, written)
            else:
                assert (second.cache_read_input_tokens,
                        second.cache_creation_input_tokens) == (written, 0)
    finally:
        await provider.aclose()


async def test_without_breakpoints_nothing_is_cached(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.caching = True
    provider = AnthropicProvider(api_key=TEST_KEY, base_url=fake_anthropic.base_url,
                                 max_retries=0)
    try:
        fake_anthropic.script(Response.text("a"), Response.text("b"))
        request = ModelRequest("claude-sonnet-4-5", _transcript(), 100, system=BIG_SYSTEM,
                               tools=TOOLS, cache=False)
        turns = [await provider.stream(request, lambda t: None) for _ in range(2)]
    finally:
        await provider.aclose()
    assert [(t.cache_creation_input_tokens, t.cache_read_input_tokens) for t in turns] == [
        (0, 0), (0, 0)]
    assert turns[0].input_tokens == turns[1].input_tokens > len(BIG_SYSTEM) // 4
