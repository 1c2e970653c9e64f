"""A tool call's streamed input, however broken, becomes a ToolCall with ``error`` set: a message
the model can act on, never an exception that ends the run as an internal error."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.agent.events import RunFinished, ToolFinished
from app.core.agent.models.tool_calls import parse_tool_call
from tests.fakes.anthropic_server import Response, tool
from tests.unit.agent.helpers import Harness

HUGE_INT = "7" * 5000  # past CPython's 4,300-digit int-string conversion limit


def _deep(depth: int) -> str:
    return '{"value": ' + "[" * depth + "]" * depth + "}"


# (raw input, a phrase the error must contain)
MALFORMED: list[tuple[str, str]] = [
    ('{"value": ' + HUGE_INT + "}", "digits"),
    ('{"value": -' + HUGE_INT + "}", "digits"),
    ('{"value": [1, 2, ' + HUGE_INT + "]}", "digits"),
    ("[" * 100_000, "nested"),
    ('{"a": ' * 50_000, "nested"),
    (_deep(500), "nested"),  # parses, but too deep for what the loop does with it later
    ('{"value": NaN}', "NaN"),
    ('{"value": Infinity}', "NaN"),
    ('{"value": -Infinity}', "NaN"),
    ('{"value": 1e999}', "NaN"),
    ('{"value": "\\ud800"}', "surrogate"),
    ('{"\\udfff": "x"}', "surrogate"),
    ('{"value": "\ud800"}', "surrogate"),  # a real lone surrogate in the text itself
    ("[]", "JSON object"),
    ("1", "JSON object"),
    ("null", "JSON object"),
    ('"text"', "JSON object"),
    ("true", "JSON object"),
    ('{"value": "a"} trailing', "not valid JSON"),
    ("{", "not valid JSON"),
    ("\x00", "not valid JSON"),
    ('{"value": "\x01"}', "not valid JSON"),
]


@pytest.mark.parametrize(("raw", "phrase"), MALFORMED,
                         ids=[f"case{i}" for i in range(len(MALFORMED))])
def test_malformed_input_is_an_error_never_an_exception(raw: str, phrase: str) -> None:
    call = parse_tool_call("toolu_1", "record", raw, "tool_use")

    assert call.error is not None and phrase in call.error
    assert call.input == {}
    # The raw text goes to the audit table as JSON text in SQLite: it must encode.
    call.raw_input.encode("utf-8")
    assert len(call.error) < 500  # a message, not an echo of a huge input


def test_cut_off_input_says_max_tokens() -> None:
    call = parse_tool_call("toolu_1", "record", '{"value": "abc', "max_tokens")
    assert call.error is not None and "max_tokens" in call.error


def test_valid_input_still_parses() -> None:
    deep_enough = _deep(20)
    assert parse_tool_call("i", "n", deep_enough, "tool_use").error is None
    assert parse_tool_call("i", "n", '{"n": ' + "9" * 4000 + "}", "tool_use").input == {
        "n": int("9" * 4000)}
    assert parse_tool_call("i", "n", '{"s": "caf\\u00e9 \\ud83d\\ude00"}', "tool_use").input == {
        "s": "café 😀"}


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.text())
def test_any_text_parses_or_is_an_error(raw: str) -> None:
    call = parse_tool_call("i", "n", raw, "tool_use")
    if call.error is None:
        assert isinstance(call.input, dict)
        # What is kept is what the next request can send.
        json.dumps(call.input, ensure_ascii=False, allow_nan=False).encode("utf-8")
    call.raw_input.encode("utf-8")


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda children: st.lists(children) | st.dictionaries(st.text(), children)))
def test_any_json_value_parses_or_is_an_error(value: object) -> None:
    raw = json.dumps({"value": value})  # NaN and infinities become the non-JSON literals
    call = parse_tool_call("i", "n", raw, "tool_use")
    if call.error is None:
        json.dumps(call.input, ensure_ascii=False, allow_nan=False).encode("utf-8")


async def test_a_streamed_5000_digit_integer_is_an_error_result_and_the_run_goes_on(
        harness: Harness) -> None:
    harness.allow("record")
    harness.server.script(
        Response.tools(tool("record", raw_json='{"value": ' + HUGE_INT + "}", id="toolu_big"),
                       tool("record", {"value": "fine"}, id="toolu_ok")),
        Response.text("I will send it as a string."))
    session = harness.session()

    await session.run("record a big number")

    assert harness.last() == RunFinished("end_turn", 2, 24, harness.last().output_tokens)
    big, ok = harness.server.last_request.tool_results()
    assert big["tool_use_id"] == "toolu_big" and big["is_error"] is True
    assert "digits" in big["content"] and "Call record again" in big["content"]
    assert ok["content"] == "recorded fine"
    assert harness.record.calls == [{"value": "fine"}]
    assert [(f.tool_use_id, f.outcome) for f in harness.of(ToolFinished)] == [
        ("toolu_big", "invalid"), ("toolu_ok", "executed")]
    assert [a.outcome for a in harness.audit()] == ["invalid", "executed"]


async def test_lone_surrogates_in_streamed_input_do_not_break_the_next_request(
        harness: Harness) -> None:
    harness.allow("record")
    harness.server.script(
        Response.tools(tool("record", raw_json='{"value": "\\udc00"}', id="toolu_sur")),
        Response.text("ok"))
    await harness.session().run("go")

    assert isinstance(harness.last(), RunFinished)
    (result,) = harness.server.last_request.tool_results()
    assert result["is_error"] and "surrogate" in result["content"]
    assert harness.record.calls == []


async def test_a_call_is_validated_once_before_it_runs(harness: Harness, monkeypatch) -> None:
    harness.allow("record")
    harness.server.script(Response.tool_use("record", {"value": "v"}, id="toolu_1"),
                          Response.text("done"))
    validate = harness.registry.validate
    checked: list[str] = []

    def counting_validate(name: str, tool_input: object) -> str | None:
        checked.append(name)
        return validate(name, tool_input)

    monkeypatch.setattr(harness.registry, "validate", counting_validate)
    await harness.session().run("go")

    assert harness.record.calls == [{"value": "v"}]
    assert checked == ["record"]  # when the call was checked; not again to execute it
