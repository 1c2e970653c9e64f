"""Typed tool parameters: the schema and the parser are one declaration and agree.

The property tests compare ``parse`` with jsonschema's Draft 2020-12 validator run on
``json_schema()``: if they accept exactly the same inputs, what the model is told and what the
tool enforces cannot drift apart.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from functools import partial
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from app.core.tools.params.declaration import Params, param
from app.core.tools.params.fields import MISSING
from app.core.tools.params.problems import ParamsError, Problem

ROOT = Path(__file__).resolve().parents[3]

# Derandomized: the same examples on every run and machine, so a failure always reproduces.
PROPERTY = settings(derandomize=True, database=None, deadline=None, max_examples=250,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# -- sample declarations: between them they use every supported feature ----------------------

class ReadFileParams(Params):
    path: str = param(description="File to read, relative to the project or absolute")
    offset: int = param(default=1, minimum=1, description="First line (1-based)")
    limit: int = param(default=2000, minimum=1, maximum=100_000, description="Max lines")


class WriteParams(Params):
    path: str = param(min_length=1)
    content: str
    mode: Literal["create", "overwrite", "append"] = param(default="overwrite",
                                                          description="How to write")
    create_dirs: bool = True


class GitArgs(Params):
    files: list[str] = param(default=[], max_length=3, pattern=r"^[a-c]+$")
    max_count: int | None = param(default=None, minimum=1, maximum=50)
    ref: str | None = None
    staged: bool = False


class GitParams(Params):
    action: Literal["status", "diff", "log"]
    args: GitArgs | None = param(default=None, description="Action-specific arguments")


class Loose(Params, allow_extra=True):
    name: str = param(default="x", pattern=r"^[a-z]+$", max_length=5)


class Kitchen(Params):
    ratio: float = param(default=1.0, exclusive_minimum=0, maximum=10.5)
    below: float | None = param(default=None, exclusive_maximum=3)
    levels: list[Literal[1, 2, 3]] | None = None
    nums: list[int] = param(default=[], minimum=-5, maximum=5, max_length=4)
    checks: list[Literal["build", "lint"]] = param(default=["build"], min_length=1)
    loose: Loose = param(default=Loose())
    extra: dict[str, Any] = param(default={})
    note: str | None = param(min_length=2)  # required, but may be null
    entries: list[GitArgs] = param(default=[], max_length=2)


# Few fields each, so that generated mistakes hit every field often.
class Bounds(Params):
    ratio: float = param(default=1.0, exclusive_minimum=0, maximum=10.5)
    below: float | None = param(default=None, exclusive_maximum=3)
    count: int = param(default=5, minimum=-3, exclusive_maximum=7)


class Lists(Params):
    levels: list[Literal[1, 2, 3]] | None = None
    nums: list[int] = param(default=[], minimum=-5, maximum=5, max_length=4)
    checks: list[Literal["build", "lint"]] = param(default=["build"], min_length=1)


SAMPLES: list[type[Params]] = [ReadFileParams, WriteParams, GitArgs, GitParams, Loose, Bounds,
                               Lists, Kitchen]


def _accepts(cls: type[Params], value: Any) -> bool:
    try:
        cls.parse(value)
    except ParamsError:
        return False
    return True


def _problems(cls: type[Params], value: Any) -> list[str]:
    with pytest.raises(ParamsError) as info:
        cls.parse(value)
    return [str(p) for p in info.value.problems]


# -- schema ----------------------------------------------------------------------------------

def test_schema_of_a_simple_class_is_exact_and_byte_stable() -> None:
    expected = {
        "type": "object",
        "properties": {
            "path": {"type": "string",
                     "description": "File to read, relative to the project or absolute"},
            "offset": {"type": "integer", "minimum": 1, "description": "First line (1-based)",
                       "default": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100000,
                      "description": "Max lines", "default": 2000},
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    first = ReadFileParams.json_schema()
    assert first == expected
    # Key order is part of the bytes sent to the model (and so of its prompt cache).
    assert json.dumps(first) == json.dumps(expected)
    first["properties"]["limit"]["maximum"] = 1  # a caller's mutation must not reach the cache
    first["required"].append("limit")
    assert json.dumps(ReadFileParams.json_schema()) == json.dumps(expected)


def test_schema_features_nested_nullable_enum_and_open_objects() -> None:
    schema = GitParams.json_schema()
    assert schema["properties"]["action"] == {"type": "string",
                                              "enum": ["status", "diff", "log"]}
    args = schema["properties"]["args"]
    assert args["type"] == ["object", "null"]
    assert args["additionalProperties"] is False
    assert args["description"] == "Action-specific arguments" and args["default"] is None
    assert args["properties"]["files"] == {
        "type": "array", "items": {"type": "string", "pattern": "^[a-c]+$"}, "maxItems": 3,
        "default": []}
    assert args["properties"]["max_count"]["type"] == ["integer", "null"]
    assert schema["required"] == ["action"]

    kitchen = Kitchen.json_schema()["properties"]
    assert kitchen["ratio"] == {"type": "number", "exclusiveMinimum": 0, "maximum": 10.5,
                                "default": 1.0}
    assert kitchen["levels"]["items"] == {"type": "integer", "enum": [1, 2, 3]}
    assert kitchen["note"] == {"type": ["string", "null"], "minLength": 2}
    assert kitchen["loose"] == {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 5, "pattern": "^[a-z]+$", "default": "x"}},
        "default": {"name": "x"}}  # allow_extra: no additionalProperties
    assert kitchen["extra"] == {"type": "object", "default": {}}
    assert Kitchen.json_schema()["required"] == ["note"]
    assert "required" not in Loose.json_schema()


@pytest.mark.parametrize("cls", SAMPLES, ids=lambda c: c.__name__)
def test_every_schema_is_a_valid_draft_2020_12_schema(cls: type[Params]) -> None:
    Draft202012Validator.check_schema(cls.json_schema())


def test_a_nullable_enum_lists_null_among_its_values() -> None:
    class P(Params):
        mode: Literal["a", "b"] | None = None

    assert P.json_schema()["properties"]["mode"] == {
        "type": ["string", "null"], "enum": ["a", "b", None], "default": None}
    assert P.parse({"mode": None}).mode is None


# -- parsing ---------------------------------------------------------------------------------

def test_parse_fills_defaults_and_types_values() -> None:
    p = ReadFileParams.parse({"path": "a.txt", "limit": 3.0})
    assert (p.path, p.offset, p.limit) == ("a.txt", 1, 3)
    assert type(p.limit) is int  # 3.0 from a model becomes a real int
    k = Kitchen.parse({"note": None, "ratio": 2, "levels": [1.0, 3]})
    assert type(k.ratio) is float and k.ratio == 2.0
    assert k.levels == [1, 3] and all(type(v) is int for v in k.levels)
    assert k.checks == ["build"] and k.loose == Loose(name="x") and k.note is None


def test_messages_say_what_to_fix() -> None:
    assert _problems(ReadFileParams, {"path": "a", "limit": 500000}) == [
        "limit: must be at most 100000 (got 500000)"]
    assert _problems(ReadFileParams, {}) == ["path: required"]
    assert _problems(WriteParams, {"path": "a", "content": "", "mode": "x"}) == [
        "mode: must be one of 'create', 'overwrite', 'append' (got 'x')"]
    assert _problems(WriteParams, {"path": "a", "content": "", "mode": "apend"}) == [
        "mode: must be one of 'create', 'overwrite', 'append' (got 'apend'; did you mean "
        "'append'?)"]
    assert _problems(ReadFileParams, {"pth": "a"}) == [
        "unknown property 'pth' (did you mean 'path'?)", "path: required"]
    assert _problems(GitParams, {"action": "log", "args": {"files": ["a", 3], "stagd": 1}}) == [
        "args: unknown property 'stagd' (did you mean 'staged'?)",
        "args/files/1: must be a string (got 3)"]
    assert _problems(WriteParams, {"path": "", "content": None}) == [
        "path: must be at least 1 characters long (got an empty string)",
        "content: must be a string (got null)"]
    assert _problems(GitArgs, {"files": ["ab", "d"], "max_count": 0}) == [
        "files/1: must match the regular expression '^[a-c]+$' (got 'd')",
        "max_count: must be at least 1 (got 0)"]
    assert _problems(Kitchen, {"note": "x", "ratio": 0, "below": 3, "nums": [1] * 5,
                               "checks": []}) == [
        "ratio: must be greater than 0 (got 0)",
        "below: must be less than 3 (got 3)",
        "nums: must have at most 4 items (got 5)",
        "checks: must have at least 1 items (got 0)",
        "note: must be at least 2 characters long (got 1)"]


def test_bool_is_not_a_number_and_numbers_are_not_bools() -> None:
    assert _problems(ReadFileParams, {"path": "a", "offset": True}) == [
        "offset: must be an integer (got true)"]
    assert _problems(Kitchen, {"note": None, "ratio": False}) == [
        "ratio: must be a number (got false)"]
    assert _problems(Kitchen, {"note": None, "levels": [True]}) == [
        "levels/0: must be one of 1, 2, 3 (got true)"]
    assert _problems(WriteParams, {"path": "a", "content": "", "create_dirs": 1}) == [
        "create_dirs: must be true or false (got 1)"]


def test_integers_accept_integral_floats_only() -> None:
    assert ReadFileParams.parse({"path": "a", "offset": 7.0}).offset == 7
    assert _problems(ReadFileParams, {"path": "a", "offset": 2.5}) == [
        "offset: must be an integer (got 2.5)"]
    assert _problems(ReadFileParams, {"path": "a", "offset": "3"}) == [
        "offset: must be an integer (got '3')"]


def test_huge_and_non_finite_numbers_are_reported_not_crashing() -> None:
    huge = 10 ** 5000  # str() of this raises ValueError in Python 3.11: the message must not
    assert _problems(ReadFileParams, {"path": "a", "limit": huge}) == [
        "limit: must be at most 100000 (got an integer of about 5001 digits)"]
    assert _problems(ReadFileParams, {"path": "a", "limit": -huge}) == [
        "limit: must be at least 1 (got a negative integer of about 5001 digits)"]
    assert _problems(ReadFileParams, {"path": "a", "limit": 1e300}) == [
        "limit: must be at most 100000 (got 1e+300)"]
    assert _problems(Kitchen, {"note": None, "below": float("nan")}) == [
        "below: must be a finite number (got NaN)"]
    assert _problems(Kitchen, {"note": None, "ratio": float("-inf")}) == [
        "ratio: must be a finite number (got -Infinity)"]
    assert _problems(Kitchen, {"note": None, "below": -huge}) == [
        "below: must be a number below 1.8e308 in size (got a negative integer of about 5001 "
        "digits)"]
    assert _problems(ReadFileParams, {"path": "a", "offset": float("inf")}) == [
        "offset: must be an integer (got Infinity)"]


def test_strings_with_lone_surrogates_are_accepted_and_messages_stay_utf8() -> None:
    text = "a\ud800b"
    assert WriteParams.parse({"path": text, "content": text}).path == text
    with pytest.raises(ParamsError) as info:
        WriteParams.parse({"path": "a", "content": "", "mode": "\udfff", "\udc80": 1})
    assert info.value.message_for("write_file").encode("utf-8")
    assert "'\\udfff'" in str(info.value) and "'\\udc80'" in str(info.value)


def test_long_values_are_cut_in_messages() -> None:
    (message,) = _problems(ReadFileParams, {"path": "a", "offset": "x" * 10_000})
    assert message == f"offset: must be an integer (got {'x' * 60!r}… (10000 characters))"


def test_null_is_only_accepted_where_declared() -> None:
    assert _problems(ReadFileParams, {"path": "a", "offset": None}) == [
        "offset: must be an integer (got null)"]
    assert GitParams.parse({"action": "log", "args": None}).args is None
    assert GitArgs.parse({"max_count": None}).max_count is None
    assert _problems(Kitchen, {}) == ["note: required"]  # nullable is not optional


def test_non_objects_are_refused_with_the_registry_wording() -> None:
    with pytest.raises(ParamsError) as info:
        ReadFileParams.parse(["path"])
    assert info.value.problems == [Problem("", "must be an object (got an array)")]
    assert info.value.message_for("read_file") == (
        "Invalid input for read_file: expected a JSON object, got list. Call the tool again "
        "with an object matching its input_schema.")
    assert _problems(GitParams, {"action": "log", "args": "--all"}) == [
        "args: must be an object (got '--all')"]


def test_message_for_keeps_the_registry_shape() -> None:
    with pytest.raises(ParamsError) as info:
        ReadFileParams.parse({"pth": "a", "limit": 0})
    assert info.value.message_for("read_file") == (
        "Invalid input for read_file:\n"
        "- (top level): unknown property 'pth' (did you mean 'path'?)\n"
        "- path: required\n"
        "- limit: must be at least 1 (got 0)\n"
        "Expected properties: path, offset, limit; required: path. Fix the input and call the "
        "tool again.")


def test_message_for_lists_five_problems_and_counts_the_rest() -> None:
    with pytest.raises(ParamsError) as info:
        Kitchen.parse({"note": None, "nums": [], "entries": [{"files": list(range(3))}],
                       "levels": ["x"] * 500})
    err = info.value
    assert err.total == 503
    assert len(err.problems) == 100  # a bounded sample, however large the input
    text = err.message_for("kitchen")
    assert text.splitlines()[1:7] == [
        "- levels/0: must be one of 1, 2, 3 (got 'x')",
        "- levels/1: must be one of 1, 2, 3 (got 'x')",
        "- levels/2: must be one of 1, 2, 3 (got 'x')",
        "- levels/3: must be one of 1, 2, 3 (got 'x')",
        "- levels/4: must be one of 1, 2, 3 (got 'x')",
        "- … and 498 more"]
    assert text.endswith("required: note. Fix the input and call the tool again.")


def test_allow_extra_drops_unknown_properties() -> None:
    assert Loose.parse({"name": "ab", "other": [1]}) == Loose(name="ab")
    assert "additionalProperties" not in Loose.json_schema()


# -- instances -------------------------------------------------------------------------------

def test_instances_are_frozen_and_construction_is_checked() -> None:
    p = ReadFileParams(path="a")
    with pytest.raises(AttributeError, match="frozen"):
        p.limit = 5  # type: ignore[misc]  # what mypy also refuses
    with pytest.raises(AttributeError, match="frozen"):
        del p.path
    with pytest.raises(ParamsError, match="limit: must be at least 1"):
        ReadFileParams(path="a", limit=0)
    with pytest.raises(ParamsError, match="unknown property 'lmit'"):
        ReadFileParams(path="a", lmit=3)  # type: ignore[call-arg]
    assert p.replace(limit=7) == ReadFileParams(path="a", limit=7)
    with pytest.raises(ParamsError, match="offset: must be at least 1"):
        p.replace(offset=0)
    assert p == ReadFileParams.parse({"path": "a"}) and p != ReadFileParams(path="b")
    assert hash(p) == hash(ReadFileParams(path="a"))
    assert repr(p) == "ReadFileParams(path='a', offset=1, limit=2000)"


def test_nested_values_accept_instances_from_python() -> None:
    args = GitArgs(files=["a"])
    p = GitParams(action="diff", args=args)
    assert p.args is args
    assert p.to_dict() == {"action": "diff", "args": {"files": ["a"], "max_count": None,
                                                      "ref": None, "staged": False}}


def test_mutable_defaults_are_fresh_per_instance() -> None:
    a, b = GitArgs(), GitArgs()
    a.files.append("x")
    assert b.files == [] and GitArgs.parse({}).files == []
    assert GitArgs.json_schema()["properties"]["files"]["default"] == []
    k = Kitchen(note=None)
    k.extra["x"] = 1
    assert Kitchen(note=None).extra == {}


def test_parse_copies_lists_and_objects_it_is_given() -> None:
    data: dict[str, Any] = {"note": None, "nums": [1], "extra": {"a": [1]}}
    k = Kitchen.parse(data)
    data["nums"].append(2)
    data["extra"]["a"].append(2)
    assert k.nums == [1] and k.extra == {"a": [1]}


def test_subclasses_extend_and_override_fields() -> None:
    class Base(Params):
        path: str
        limit: int = param(default=10, minimum=1)

    class Child(Base):
        limit: int = param(default=5, minimum=1, maximum=5)
        extra: bool = False

    assert [f.name for f in Child.param_fields()] == ["path", "limit", "extra"]
    assert Child.parse({"path": "p"}).limit == 5
    assert _problems(Child, {"path": "p", "limit": 6}) == ["limit: must be at most 5 (got 6)"]
    assert Base.parse({"path": "p"}).limit == 10  # the base keeps its own declaration


def test_param_fields_describe_the_declaration() -> None:
    fields = {f.name: f for f in WriteParams.param_fields()}
    assert fields["path"].required and fields["path"].default is MISSING
    assert not fields["mode"].required and fields["mode"].default == "overwrite"
    assert fields["mode"].description == "How to write"


class UsesLater(Params):
    later: Later | None = None  # defined below: annotations are resolved on first use


class Later(Params):
    n: int = 1


def test_forward_references_and_locally_declared_classes_resolve() -> None:
    assert UsesLater.parse({"later": {}}).later == Later(n=1)

    class Inner(Params):
        n: int = 2

    class Outer(Params):
        inner: Inner  # a local of this function: kept from when Outer was declared

    assert Outer.parse({"inner": {}}).inner == Inner(n=2)


# -- declaration mistakes surface as TypeError on first use ------------------------------------

def _declaration_error(cls: type[Params]) -> str:
    with pytest.raises(TypeError) as info:
        cls.json_schema()
    return str(info.value)


def test_declaration_mistakes_are_explained() -> None:
    class Union2(Params):
        x: int | str

    class SetType(Params):
        x: set[str]

    class BoundOnStr(Params):
        x: str = param(minimum=1)

    class PatternOnBool(Params):
        x: bool = param(default=False, pattern="a")

    class BadDefault(Params):
        limit: int = param(default=0, minimum=1)

    class NoneDefault(Params):
        x: str = None  # type: ignore[assignment]  # the mistake under test

    class BadPattern(Params):
        x: str = param(pattern="(")

    class Reserved(Params):
        parse: int = 1  # type: ignore[assignment]  # the mistake under test

    class Private(Params):
        _x: int = 1

    class MixedLiteral(Params):
        x: Literal["a", 1]

    class Unresolvable(Params):
        x: NoSuchType  # type: ignore[name-defined]  # noqa: F821  # the mistake under test

    class NegativeLength(Params):
        x: str = param(min_length=-1)

    assert "unsupported union" in _declaration_error(Union2)
    assert "unsupported type set[str]" in _declaration_error(SetType)
    assert _declaration_error(BoundOnStr).endswith("minimum does not apply to <class 'str'>")
    assert "pattern does not apply" in _declaration_error(PatternOnBool)
    assert _declaration_error(BadDefault).endswith(
        "BadDefault.limit: the default 0 is invalid: must be at least 1 (got 0)")
    assert "declare the type as X | None" in _declaration_error(NoneDefault)
    assert "invalid pattern '('" in _declaration_error(BadPattern)
    assert "'parse' is a Params method name" in _declaration_error(Reserved)
    assert "must not start with '_'" in _declaration_error(Private)
    assert "only strings or only ints" in _declaration_error(MixedLiteral)
    assert "cannot resolve the annotation 'NoSuchType'" in _declaration_error(Unresolvable)
    assert "non-negative int" in _declaration_error(NegativeLength)
    with pytest.raises(TypeError, match="has no fields"):
        Params()


class Node(Params):  # module level: a cycle needs a name both classes can see
    children: list[Node] = param(default=[])


def test_recursive_classes_are_refused() -> None:
    assert "contains itself (Node -> Node)" in _declaration_error(Node)


# -- properties ------------------------------------------------------------------------------

_scalars = (st.none() | st.booleans() | st.integers()
            | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6))
# Any JSON value: what a model can send. Floats are finite because JSON has no NaN/Infinity.
json_values = st.recursive(
    _scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5),
                                                                        kids, max_size=3),
    max_leaves=8)


def near(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values around what a schema accepts: valid ones, edge cases and near misses.

    Read from the schema only to aim the generator; the test's oracle is jsonschema.
    """
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    options: list[st.SearchStrategy[Any]] = [json_values]
    bounds = [schema[k] for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
              if k in schema]
    edges = [b + d for b in bounds for d in (-1, -0.5, 0, 0.5, 1)]
    for t in types:
        if t == "null":
            options.append(st.none())
        elif "enum" in schema:
            values = [v for v in schema["enum"] if v is not None]
            options += [st.sampled_from(values), st.sampled_from(values).map(
                lambda v: float(v) if isinstance(v, int) else v + "x"), st.text(max_size=4),
                st.booleans()]
        elif t == "string":
            options.append(st.text(alphabet="abcdxyzA\ud800", max_size=7))
        elif t in ("integer", "number"):
            options += [st.integers(-10, 120), st.integers(-10, 120).map(float),
                        st.floats(-10, 120), st.sampled_from([True, False, 2**64, -(2**70)])]
            if edges:  # twice: the bounds are where off-by-one mistakes live
                options += [st.sampled_from(edges), st.sampled_from(edges).map(float)]
        elif t == "boolean":
            options.append(st.sampled_from([True, False, 0, 1, "true"]))
        elif t == "array":
            # Lengths at and just past the bounds with valid items, and items that may be wrong.
            lows = [schema["minItems"] - 1, schema["minItems"]] if "minItems" in schema else []
            highs = [schema["maxItems"], schema["maxItems"] + 1] if "maxItems" in schema else []
            items = schema["items"]
            if lows or highs:
                lengths = st.sampled_from([n for n in lows + highs if n >= 0])
                options.append(lengths.flatmap(partial(_valid_list, items)))
            options.append(st.lists(near(items), max_size=5))
        elif t == "object" and "properties" in schema:
            options.append(near_object(schema))
        elif t == "object":
            options.append(st.dictionaries(st.text(max_size=3), json_values, max_size=3))
    return st.one_of(options)


def near_object(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    props = schema["properties"]
    # Mostly valid properties with some near misses: objects wrong in one or two places.
    known = st.fixed_dictionaries({}, optional={k: valid(s) | near(s) for k, s in props.items()})
    misspelled = st.dictionaries(
        st.sampled_from([k[:-1] for k in props] + ["extra", ""]), json_values, max_size=1)
    return st.tuples(known, st.none() | misspelled).map(
        lambda pair: {**pair[0], **(pair[1] or {})})


def _valid_list(items: dict[str, Any], n: int) -> st.SearchStrategy[list[Any]]:
    return st.lists(valid(items), min_size=n, max_size=n)


@st.composite
def one_mistake(draw: st.DrawFn, schema: dict[str, Any]) -> Any:
    """A valid value with one change somewhere inside it, which may or may not break it.

    Aims at the boundary between accepted and refused, where schema and parser could differ.
    """
    return _perturb(draw, schema, draw(valid(schema)))


def _perturb(draw: st.DrawFn, schema: dict[str, Any], value: Any) -> Any:
    if isinstance(value, dict) and "properties" in schema:
        props = schema["properties"]
        action = draw(st.sampled_from(["replace", "replace", "drop", "unknown"]))
        if action == "replace":
            name = draw(st.sampled_from(sorted(props)))
            inside = name in value and draw(st.booleans())
            value[name] = (_perturb(draw, props[name], value[name]) if inside
                           else draw(near(props[name])))
        elif action == "drop" and value:
            del value[draw(st.sampled_from(sorted(value)))]
        else:
            value[draw(st.sampled_from([k[:-1] for k in props] + ["extra"]))] = draw(json_values)
        return value
    if isinstance(value, list) and "items" in schema:
        i = draw(st.integers(0, len(value)))
        if i == len(value):  # a new item, which may be wrong
            value.append(draw(near(schema["items"])))
        else:
            value[i] = _perturb(draw, schema["items"], value[i])
        return value
    return draw(near(schema))


def valid(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Only values the schema accepts (checked against jsonschema in the test as well)."""
    nullable = isinstance(schema["type"], list)
    kind = schema["type"][0] if nullable else schema["type"]
    strategy: st.SearchStrategy[Any]
    if "enum" in schema:
        strategy = st.sampled_from([v for v in schema["enum"] if v is not None])
    elif kind == "string":
        low, high = schema.get("minLength", 0), schema.get("maxLength", 8)
        if "pattern" in schema:
            strategy = st.from_regex(schema["pattern"]).filter(lambda s: low <= len(s) <= high)
        else:
            strategy = st.text(min_size=low, max_size=high)
    elif kind == "integer":
        low = schema.get("minimum", schema.get("exclusiveMinimum", -(2**70) - 1) + 1)
        high = schema.get("maximum", schema.get("exclusiveMaximum", 2**70 + 1) - 1)
        strategy = st.integers(math.ceil(low), math.floor(high))
    elif kind == "number":
        strategy = st.floats(
            min_value=schema.get("minimum", schema.get("exclusiveMinimum")),
            max_value=schema.get("maximum", schema.get("exclusiveMaximum")),
            exclude_min="exclusiveMinimum" in schema, exclude_max="exclusiveMaximum" in schema,
            allow_nan=False, allow_infinity=False)
    elif kind == "boolean":
        strategy = st.booleans()
    elif kind == "array":
        strategy = st.lists(valid(schema["items"]), min_size=schema.get("minItems", 0),
                            max_size=schema.get("maxItems", 4))
    elif "properties" in schema:
        required = set(schema.get("required", ()))
        strategy = st.fixed_dictionaries(
            {k: valid(s) for k, s in schema["properties"].items() if k in required},
            optional={k: valid(s) for k, s in schema["properties"].items()
                      if k not in required})
    else:
        strategy = st.dictionaries(st.text(max_size=3), json_values, max_size=3)
    return strategy | st.none() if nullable else strategy


@pytest.mark.parametrize("cls", SAMPLES, ids=lambda c: c.__name__)
def test_parse_accepts_exactly_what_the_schema_accepts(cls: type[Params]) -> None:
    schema = cls.json_schema()
    validator = Draft202012Validator(schema)
    outcomes = {True: 0, False: 0}

    @PROPERTY
    @given(valid(schema) | one_mistake(schema) | near_object(schema) | json_values)
    def agree(value: Any) -> None:
        accepted = _accepts(cls, value)
        assert accepted == validator.is_valid(value), (
            value, [e.message for e in validator.iter_errors(value)])
        outcomes[accepted] += 1

    agree()
    # Both answers must occur often, or the agreement above would say little.
    assert outcomes[True] >= 20 and outcomes[False] >= 20, outcomes


def _subsumes(full: Any, partial: Any) -> bool:
    """``full`` holds ``partial``'s values; objects may have more keys (defaults filled in)."""
    if isinstance(partial, dict):
        return isinstance(full, dict) and all(
            k in full and _subsumes(full[k], v) for k, v in partial.items())
    if isinstance(partial, list):
        return (isinstance(full, list) and len(full) == len(partial)
                and all(map(_subsumes, full, partial)))
    if isinstance(full, bool) or isinstance(partial, bool):
        return full is partial  # True == 1 in Python, but not in JSON
    return bool(full == partial)


@pytest.mark.parametrize("cls", SAMPLES, ids=lambda c: c.__name__)
def test_valid_inputs_round_trip_through_instances(cls: type[Params]) -> None:
    validator = Draft202012Validator(cls.json_schema())
    defaults = {f.name: f.default for f in cls.param_fields() if not f.required}

    @PROPERTY
    @given(valid(cls.json_schema()))
    def round_trip(value: dict[str, Any]) -> None:
        assert validator.is_valid(value)  # the generator itself is right
        instance = cls.parse(value)
        dumped = instance.to_dict()
        assert json.loads(json.dumps(dumped)) == dumped  # JSON-ready
        assert validator.is_valid(dumped)
        assert cls.parse(dumped) == instance
        assert cls(**dumped) == instance
        assert _subsumes(dumped, value)  # what was sent is what the tool sees
        for name, default in defaults.items():
            if name not in value:
                assert getattr(instance, name) == default

    round_trip()


wild_scalars = (st.none() | st.booleans() | st.integers() | st.floats()
                # Built lazily: hypothesis reprs its strategies, and a 5000-digit int has no repr.
                | st.sampled_from([5000, -400, 1024]).map(lambda e: (e // abs(e)) * 10**abs(e))
                | st.just(1e308)
                | st.text(st.characters(exclude_categories=()), max_size=8))


@pytest.mark.parametrize("cls", SAMPLES, ids=lambda c: c.__name__)
def test_parse_never_fails_with_anything_but_params_error(cls: type[Params]) -> None:
    names = [f.name for f in cls.param_fields()] + ["args", "files", "name"]
    wild = st.recursive(wild_scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(
        st.sampled_from(names) | st.text(max_size=3), kids, max_size=4), max_leaves=12)

    @PROPERTY
    @given(wild)
    def never_crashes(value: Any) -> None:
        try:
            instance = cls.parse(value)
        except ParamsError as err:
            assert err.problems and err.total >= len(err.problems)
            assert err.message_for(cls.__name__).encode("utf-8")
            assert str(err).encode("utf-8")
        else:
            assert cls.parse(instance.to_dict()) == instance

    never_crashes()


# -- cost and typing -------------------------------------------------------------------------

def test_importing_and_using_params_loads_no_heavy_module() -> None:
    code = textwrap.dedent("""
        import json, sys
        from app.core.tools.params.declaration import Params, param
        class P(Params):
            path: str = param(description="x")
            n: int = param(default=1, minimum=1)
        P.json_schema(); P.parse({"path": "a"})
        heavy = {"pydantic", "jsonschema", "dataclasses", "inspect", "difflib"}
        print(json.dumps(sorted(heavy & {m.split(".")[0] for m in sys.modules})))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


@pytest.mark.slow
def test_mypy_understands_params_classes(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    snippet = tmp_path / "snippet.py"
    snippet.write_text(textwrap.dedent("""
        from __future__ import annotations
        from typing import Literal
        from app.core.tools.params.declaration import Params, param

        class Args(Params):
            files: list[str] = param(default=[])

        class P(Params):
            path: str = param(description="x")
            offset: int = param(default=1, minimum=1)
            mode: Literal["a", "b"] = "a"
            args: Args | None = None

        p = P.parse({})
        reveal_type(p)
        reveal_type(p.offset)
        reveal_type(p.args)
        ok = P(path="x", offset=2, args=Args(files=["a"]))
        missing = P(offset=2)
        wrong = P(path=1)
        p.path = "y"
        bad_default: int = param(default="s")
    """))
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", str(snippet), "--ignore-missing-imports",
         "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), "--hide-error-context"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    lines = [line.split(": ", 1)[1] for line in proc.stdout.splitlines() if ": " in line]
    assert lines == [
        'note: Revealed type is "snippet.P"',
        'note: Revealed type is "int"',
        'note: Revealed type is "snippet.Args | None"',
        'error: Missing named argument "path" for "P"  [call-arg]',
        'error: Argument "path" to "P" has incompatible type "int"; expected "str"  [arg-type]',
        'error: Property "path" defined in "P" is read-only  [misc]',
        'error: Incompatible types in assignment (expression has type "str", variable has '
        'type "int")  [assignment]',
    ], proc.stdout + proc.stderr
