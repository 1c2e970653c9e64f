"""Elicitation forms: which requested schemas become a form, and how entries are checked."""

from __future__ import annotations

import pytest

from app.core.tools.providers.mcp.elicit_schema import UnsupportedSchema, parse_form
from tests.mcp_servers.human_loop_server import PERSON_FORM


def test_the_fields_of_a_flat_schema_in_order_with_their_constraints():
    form = parse_form(PERSON_FORM)
    by_name = {f.name: f for f in form.fields}
    assert [f.name for f in form.fields] == ["name", "age", "email", "subscribe", "color"]
    assert (by_name["name"].kind, by_name["name"].required, by_name["name"].min_length) == \
        ("string", True, 2)
    assert (by_name["age"].minimum, by_name["age"].maximum, by_name["age"].default) == \
        (0, 150, 30)
    assert by_name["email"].format == "email"
    assert by_name["color"].options == (("red", "Red"), ("green", "Green"))
    assert "suggested: 30" in by_name["age"].hint()


def test_defaults_are_never_filled_in_and_required_fields_are_enforced():
    form = parse_form(PERSON_FORM)
    content, errors = form.collect({})
    assert content == {}
    assert errors == {"name": "is required", "age": "is required"}


def test_entries_are_converted_and_checked():
    form = parse_form(PERSON_FORM)
    content, errors = form.collect({"name": "Ada", "age": "36", "email": "ada@example.org",
                                    "subscribe": False, "color": "green"})
    assert errors == {}
    assert content == {"name": "Ada", "age": 36, "email": "ada@example.org",
                       "subscribe": False, "color": "green"}


@pytest.mark.parametrize("entries, field, message", [
    ({"name": "A"}, "name", "at least 2 characters"),
    ({"age": "3.5"}, "age", "whole number"),
    ({"age": "151"}, "age", "at most 150"),
    ({"age": "-1"}, "age", "at least 0"),
    ({"email": "not an email"}, "email", "email address"),
    ({"color": "blue"}, "color", "options"),
])
def test_entries_that_do_not_fit_are_named(entries, field, message):
    _content, errors = parse_form(PERSON_FORM).collect({"name": "Ada", "age": "3", **entries})
    assert message in errors[field]


@pytest.mark.parametrize("fmt, good, bad", [
    ("uri", "https://example.org/x", "no scheme"),
    ("date", "2024-02-29", "2023-02-29"),
    ("date-time", "2024-01-01T10:00:00+00:00", "2024-01-01"),
])
def test_string_formats(fmt, good, bad):
    form = parse_form({"type": "object", "properties": {"v": {"type": "string",
                                                               "format": fmt}}})
    assert form.collect({"v": good}) == ({"v": good}, {})
    assert "v" in form.collect({"v": bad})[1]


def test_titled_and_multiple_choice_enums():
    form = parse_form({"type": "object", "properties": {
        "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}]},
        "fish": {"type": "array", "minItems": 1, "maxItems": 2,
                 "items": {"anyOf": [{"const": "f1", "title": "Tuna"},
                                     {"const": "f2", "title": "Salmon"},
                                     {"const": "f3", "title": "Trout"}]}}}})
    assert form.collect({"hero": "h1", "fish": ["f1", "f3"]}) == (
        {"hero": "h1", "fish": ["f1", "f3"]}, {})
    assert "at most 2" in form.collect({"fish": ["f1", "f2", "f3"]})[1]["fish"]


@pytest.mark.parametrize("schema, why", [
    ({"type": "array"}, "not an object"),
    ({"type": "object"}, "no properties"),
    ({"type": "object", "properties": {"a": {"type": "object"}}}, "unsupported type"),
    ({"type": "object", "properties": {"a": {"type": "string", "format": "ipv4"}}},
     "unsupported format"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},
     "without a definition"),
    ({"type": "object", "properties": {"a": {"type": "string", "enum": [1, 2]}}},
     "malformed enum"),
    ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}},
     "other than choices"),
    ("nonsense", "not an object"),
])
def test_unsupported_schemas_are_refused_with_a_reason(schema, why):
    with pytest.raises(UnsupportedSchema, match=why):
        parse_form(schema)
