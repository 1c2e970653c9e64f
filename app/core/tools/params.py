"""Typed tool parameters: one class declaration gives the JSON schema and the parsed instance.

    class ReadFileParams(Params):
        path: str = param(description="File to read, relative to the project or absolute")
        offset: int = param(default=1, minimum=1, description="First line (1-based)")
        limit: int = param(default=2000, minimum=1, maximum=100_000, description="Max lines")

    ReadFileParams.json_schema()           # {"type": "object", "properties": {...}, ...}
    p = ReadFileParams.parse(tool_input)   # a frozen ReadFileParams, or raises ParamsError
    p.limit                                # an int, for mypy too (PEP 681 dataclass_transform)

Why not pydantic: importing it costs ~80 ms plus ~5-20 ms per model, and tool modules are
imported during start-up. This module needs only typing, re and math (all loaded by then), and a
class statement does almost nothing: annotations are resolved, checked and compiled on first use
(``json_schema``, ``parse``, construction), so forward references to later classes work and an
unused class costs nothing. A declaration mistake (unsupported type, a bound on a string, an
invalid default) raises TypeError at that first use, so test every params class's schema.

``param(default=..., ...)`` takes the default by keyword only: type checkers read field
specifiers' defaults from the ``default`` keyword, so a positional default would make the field
look required to mypy.

One set of rules, shared by the schema and the parser (the property tests check the parser
against jsonschema's Draft 2020-12 validator on the schema):

- ``int`` accepts integral floats (3.0 becomes 3): JSON Schema's "integer" is any number without
  a fraction part, and models sometimes send 3.0. ``bool`` is never a number.
- ``float`` accepts ints and floats and stores a float.
- ``X | None`` accepts null. Other fields reject null even when they have a default: the model is
  told to omit the property instead, rather than having null silently mean "default".
- Unknown properties are errors, unless the class is declared ``class P(Params,
  allow_extra=True)``: then the schema leaves additionalProperties open and extras are dropped.
- ``min_length``/``max_length`` count a string's characters or a list's items. On a list field
  the other constraints (minimum, maximum, exclusive_*, pattern) apply to each item.
- ``pattern`` is searched, not anchored, as in JSON Schema: write ``^...$`` to match it whole.
- Literal[...] of strings (or of ints) is an enum; nested Params classes are inlined objects;
  ``dict[str, Any]`` is an unchecked object passed through.

Only reachable from Python, never from JSON, hence outside that agreement: NaN and infinities,
and ints too large for a float in a float field, are rejected; non-string keys are unknown.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping
from types import NoneType, UnionType
from typing import (
    Any,
    ClassVar,
    Literal,
    NamedTuple,
    Self,
    TypeVar,
    Union,
    dataclass_transform,
    get_args,
    get_origin,
    overload,
)

__all__ = ["MISSING", "ParamField", "ParamInfo", "Params", "ParamsError", "Problem", "param"]

T = TypeVar("T")

# A hostile or broken call can hold a million bad items: keep a bounded sample, count the rest.
_MAX_PROBLEMS_KEPT = 100
# How many problems message_for lists, as the registry did for jsonschema errors.
_MAX_PROBLEMS_SHOWN = 5
# Longer strings are cut in messages: the model needs to recognise its value, not reread it.
_MAX_SHOWN_CHARS = 60

_Path = tuple[str | int, ...]


class _MissingType:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _MissingType()
"""Marks "no default": the field is required."""

_BAD: Any = object()  # what a check returns after it reported a problem


# -- declaration -----------------------------------------------------------------------------

class ParamInfo:
    """What ``param()`` puts in a class body: a field's default, description and constraints."""

    __slots__ = ("default", "description", "exclusive_maximum", "exclusive_minimum",
                 "max_length", "maximum", "min_length", "minimum", "pattern")

    def __init__(self, *, default: Any = MISSING, description: str | None = None,
                 minimum: float | None = None, maximum: float | None = None,
                 exclusive_minimum: float | None = None, exclusive_maximum: float | None = None,
                 min_length: int | None = None, max_length: int | None = None,
                 pattern: str | None = None) -> None:
        self.default = default
        self.description = description
        self.minimum = minimum
        self.maximum = maximum
        self.exclusive_minimum = exclusive_minimum
        self.exclusive_maximum = exclusive_maximum
        self.min_length = min_length
        self.max_length = max_length
        self.pattern = pattern

    def constraints(self) -> dict[str, Any]:
        names = ("minimum", "maximum", "exclusive_minimum", "exclusive_maximum", "min_length",
                 "max_length", "pattern")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}


@overload
def param(*, default: T, description: str | None = None, minimum: float | None = None,
          maximum: float | None = None, exclusive_minimum: float | None = None,
          exclusive_maximum: float | None = None, min_length: int | None = None,
          max_length: int | None = None, pattern: str | None = None) -> T: ...


@overload
def param(*, description: str | None = None, minimum: float | None = None,
          maximum: float | None = None, exclusive_minimum: float | None = None,
          exclusive_maximum: float | None = None, min_length: int | None = None,
          max_length: int | None = None, pattern: str | None = None) -> Any: ...


def param(*, default: Any = MISSING, description: str | None = None,
          minimum: float | None = None, maximum: float | None = None,
          exclusive_minimum: float | None = None, exclusive_maximum: float | None = None,
          min_length: int | None = None, max_length: int | None = None,
          pattern: str | None = None) -> Any:
    """Declare a field's default (keyword only), description and constraints."""
    return ParamInfo(default=default, description=description, minimum=minimum,
                     maximum=maximum, exclusive_minimum=exclusive_minimum,
                     exclusive_maximum=exclusive_maximum, min_length=min_length,
                     max_length=max_length, pattern=pattern)


# -- problems --------------------------------------------------------------------------------

class Problem(NamedTuple):
    """One thing wrong with an input: where (``args/files/0``; "" for the object) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ParamsError(ValueError):
    """Input that does not match a params class; ``problems`` says what, in declaration order."""

    def __init__(self, problems: list[Problem], *, total: int | None = None,
                 params_cls: type[Params] | None = None, got_type: str | None = None) -> None:
        self.problems = problems
        self.total = len(problems) if total is None else total  # including ones not kept
        self.params_cls = params_cls
        self.got_type = got_type  # set when the input was not an object at all
        super().__init__("\n".join(map(str, problems)))

    def message_for(self, tool_name: str) -> str:
        """The error text for the model, in the shape ToolRegistry.validate has always used."""
        if self.got_type is not None:
            return (f"Invalid input for {tool_name}: expected a JSON object, got "
                    f"{self.got_type}. Call the tool again with an object matching its "
                    "input_schema.")
        shown = self.problems[:_MAX_PROBLEMS_SHOWN]
        lines = [f"- {p.path or '(top level)'}: {p.message}" for p in shown]
        more = self.total - len(shown)
        if more > 0:
            lines.append(f"- … and {more} more")
        props = required = ""
        if self.params_cls is not None:
            fields = _info(self.params_cls).fields
            props = ", ".join(f.name for f in fields)
            required = ", ".join(f.name for f in fields if f.required)
        return (f"Invalid input for {tool_name}:\n" + "\n".join(lines) +
                f"\nExpected properties: {props or '(none)'}; required: "
                f"{required or '(none)'}. Fix the input and call the tool again.")


class _Sink:
    """Collects problems; paths become strings only for the problems kept."""

    __slots__ = ("count", "problems")

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.count = 0

    def add(self, path: _Path, message: str) -> None:
        self.count += 1
        if len(self.problems) < _MAX_PROBLEMS_KEPT:
            self.problems.append(Problem("/".join(map(str, path)), message))


def _int_text(n: int) -> str:
    # str() of an int over 4300 digits raises ValueError (CVE-2020-10735 limit): a model (or an
    # attacker) can send one, and the message about it must not crash.
    if n.bit_length() <= 128:
        return str(n)
    digits = int(n.bit_length() * 0.30103) + 1
    return f"{'a negative' if n < 0 else 'an'} integer of about {digits} digits"


def _describe(value: Any) -> str:
    """A short JSON-flavoured rendering of a value for messages (never raises, never huge)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return _int_text(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, str):
        if not value:
            return "an empty string"
        # repr escapes lone surrogates, so the message is always valid UTF-8.
        if len(value) <= _MAX_SHOWN_CHARS:
            return repr(value)
        return f"{value[:_MAX_SHOWN_CHARS]!r}… ({len(value)} characters)"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return f"a Python {type(value).__name__}"


def _did_you_mean(word: str, choices: list[str]) -> str:
    if len(word) > 200:  # difflib is quadratic; nobody misspells a 200-character name
        return ""
    import difflib  # only on the error path: start-up does not pay for it

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else ""


# -- value kinds: each is one schema fragment and the check that matches it -------------------

class _Kind:
    json_type = ""
    mutable = False  # values that need a fresh copy per instance (lists, dicts)

    def schema(self) -> dict[str, Any]:
        return {"type": self.json_type}

    def check(self, value: Any, path: _Path, sink: _Sink) -> Any:
        raise NotImplementedError

    def dump(self, value: Any) -> Any:
        """The JSON form of a checked value."""
        return value

    def copy(self, value: Any) -> Any:
        return value


class _Bounded(_Kind):
    def __init__(self, c: dict[str, Any], where: str) -> None:
        self.minimum = _pop_number(c, "minimum", where)
        self.maximum = _pop_number(c, "maximum", where)
        self.exclusive_minimum = _pop_number(c, "exclusive_minimum", where)
        self.exclusive_maximum = _pop_number(c, "exclusive_maximum", where)

    def schema(self) -> dict[str, Any]:
        s: dict[str, Any] = {"type": self.json_type}
        for key, bound in (("minimum", self.minimum), ("exclusiveMinimum", self.exclusive_minimum),
                           ("maximum", self.maximum), ("exclusiveMaximum", self.exclusive_maximum)):
            if bound is not None:
                s[key] = bound
        return s

    def in_bounds(self, v: float, path: _Path, sink: _Sink) -> bool:
        if self.minimum is not None and v < self.minimum:
            sink.add(path, f"must be at least {_describe(self.minimum)} (got {_describe(v)})")
        elif self.exclusive_minimum is not None and v <= self.exclusive_minimum:
            sink.add(path, f"must be greater than {_describe(self.exclusive_minimum)} "
                           f"(got {_describe(v)})")
        elif self.maximum is not None and v > self.maximum:
            sink.add(path, f"must be at most {_describe(self.maximum)} (got {_describe(v)})")
        elif self.exclusive_maximum is not None and v >= self.exclusive_maximum:
            sink.add(path, f"must be less than {_describe(self.exclusive_maximum)} "
                           f"(got {_describe(v)})")
        else:
            return True
        return False


class _Int(_Bounded):
    json_type = "integer"

    def check(self, value: Any, path: _Path, sink: _Sink) -> Any:
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or (isinstance(value, float) and not value.is_integer())):  # NaN, inf too
            sink.add(path, f"must be an integer (got {_describe(value)})")
            return _BAD
        # Bounds first, on the value as sent, so a message shows 1e+300 rather than its digits.
        return int(value) if self.in_bounds(value, path, sink) else _BAD


class _Num(_Bounded):
    json_type = "number"

    def check(self, value: Any, path: _Path, sink: _Sink) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            sink.add(path, f"must be a number (got {_describe(value)})")
            return _BAD
        if isinstance(value, float) and not math.isfinite(value):
            sink.add(path, f"must be a finite number (got {_describe(value)})")
            return _BAD
        if not self.in_bounds(value, path, sink):  # compared exactly, before any rounding
            return _BAD
        try:
            return float(value)
        except OverflowError:
            sink.add(path, f"must be a number below 1.8e308 in size (got {_describe(value)})")
            return _BAD


class _Bool(_Kind):
    json_type = "boolean"

    def check(self, value: Any, path: _Path, sink: _Sink) -> Any:
        if value is True or value is False:
            return value
        sink.add(path, f"must be true or false (got {_describe(value)})")
        return _BAD


class _Str(_Kind):
    json_type = "string"

    def __init__(self, c: dict[str, Any], where: str) -> None:
        self.min_length = _pop_count(c, "min_length", where)
        self.max_length = _pop_count(c, "max_length", where)
        self.pattern: str | None = c.pop("pattern", None)
        self.regex: re.Pattern[str] | None = None
        if self.pattern is not None:
            if not isinstance(self.pattern, str):
                raise TypeError(f"{where}: pattern must be a string")
            try:
                self.regex = re.compile(self.pattern)
            except re.error as exc:
                raise TypeError(f"{where}: invalid pattern {self.pattern!r}: {exc}") from None

    def schema(self) -> dict[str, Any]:
        s: dict[str, Any] = {"type": "string"}
        if self.min_length is not None:
            s["minLength"] = self.min_length
        if self.max_length is not None:
            s["maxLength"] = self.max_length
        if self.pattern is not None:
            s["pattern"] = self.pattern
        return s

    def check(self, value: Any, path: _Path, sink: _Sink) -> Any:
        if not isinstance(value, str):
            sink.add(path, f"must be a string (got {_describe(value)})")
            return _BAD
        n = len(value)  # code points, as JSON Schema counts them
        if self.min_length is not None and n < self.min_length:
            got = "an empty string" if n == 0 else f"{n}"
            sink.add(path, f"must be at least {self.min_length} characters long (got {got})")
        elif self.max_length is not None and n > self.max_length:
            sink.add(path, f"must be at most {self.max_length} characters long (got {n})")
        elif self.regex is not None and self.regex.search(value) is None:
            sink.add(path, f"must match the regular expression {self.pattern!r} "
                           f"(got {_describe(value)})")
        else:
            return value
        return _BAD


class _Enum(_Kind):
    def __init__(self, values: tuple[Any, ...], where: str) -> None:
        self.values = tuple(dict.fromkeys(values))  # duplicates dropped, order kept
        if all(isinstance(v, str) for v in self.values):
            self.json_type = "string"
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in self.values):
            self.json_type = "integer"
        else:
            raise TypeError(f"{where}: Literal[...] must hold only strings or only ints, "
                            f"got {values!r}")

    def schema(self) -> dict[str, Any]:
        return {"type": self.json_type, "enum": list(self.values)}

    def check(self, value: Any, path: _Path, sink: _Sink) -> Any:
        if self.json_type == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)
        same_type = (isinstance(value, str) if self.json_type == "string"
                     else isinstance(value, int) and not isinstance(value, bool))
        if same_type and value in self.values:
            return value
        got = _describe(value)
        if isinstance(value, str) and self.json_type == "string":
            hint = _did_you_mean(value, list(self.values))
            got += f"; {hint}" if hint else ""
        options = ", ".join(repr(v) for v in self.values)
        sink.add(path, f"must be one of {options} (got {got})")
        return _BAD


class _List(_Kind):
    json_type = "array"
    mutable = True

    def __init__(self, item: Any, c: dict[str, Any], where: str, stack: tuple[type, ...]
                 ) -> None:
        self.min_items = _pop_count(c, "min_length", where)
        self.max_items = _pop_count(c, "max_length", where)
        self.item = _compile(item, c, f"{where} items", stack)  # the rest constrain each item

    def schema(self) -> dict[str, Any]:
        s: dict[str, Any] = {"type": "array", "items": self.item.schema()}
        if self.min_items is not None:
            s["minItems"] = self.min_items
        if self.max_items is not None:
            s["maxItems"] = self.max_items
        return s

    def check(self, value: Any, path: _Path, sink: _Sink) -> Any:
        if not isinstance(value, list):
            sink.add(path, f"must be an array (got {_describe(value)})")
            return _BAD
        n = len(value)
        if self.min_items is not None and n < self.min_items:
            sink.add(path, f"must have at least {self.min_items} items (got {n})")
            return _BAD
        if self.max_items is not None and n > self.max_items:
            sink.add(path, f"must have at most {self.max_items} items (got {n})")
            return _BAD
        before = sink.count
        out = [self.item.check(v, (*path, i), sink) for i, v in enumerate(value)]
        return out if sink.count == before else _BAD

    def dump(self, value: Any) -> Any:
        return [self.item.dump(v) for v in value]

    def copy(self, value: Any) -> Any:
        return [self.item.copy(v) for v in value]


class _Dict(_Kind):
    json_type = "object"
    mutable = True

    def check(self, value: Any, path: _Path, sink: _Sink) -> Any:
        if not isinstance(value, Mapping):
            sink.add(path, f"must be an object (got {_describe(value)})")
            return _BAD
        return _copy_json(dict(value))

    def copy(self, value: Any) -> Any:
        return _copy_json(value)

    dump = copy


class _Object(_Kind):
    json_type = "object"

    def __init__(self, cls: type[Params], stack: tuple[type, ...]) -> None:
        self.cls = cls
        self.info = _info(cls, stack)  # resolves the nested class now, so cycles are caught

    def schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = _copy_json(self.info.schema)  # the caller may add keys
        return schema

    def check(self, value: Any, path: _Path, sink: _Sink) -> Any:
        return _parse_object(self.cls, value, path, sink)

    def dump(self, value: Any) -> Any:
        return value.to_dict()


class _Nullable(_Kind):
    def __init__(self, inner: _Kind) -> None:
        self.inner = inner
        self.mutable = inner.mutable

    def schema(self) -> dict[str, Any]:
        s = self.inner.schema()
        s["type"] = [s["type"], "null"]
        if "enum" in s:
            s["enum"] = [*s["enum"], None]
        return s

    def check(self, value: Any, path: _Path, sink: _Sink) -> Any:
        return None if value is None else self.inner.check(value, path, sink)

    def dump(self, value: Any) -> Any:
        return None if value is None else self.inner.dump(value)

    def copy(self, value: Any) -> Any:
        return None if value is None else self.inner.copy(value)


def _pop_number(c: dict[str, Any], name: str, where: str) -> float | None:
    value = c.pop(name, None)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                              or not math.isfinite(value)):
        raise TypeError(f"{where}: {name} must be a finite number, got {value!r}")
    return value


def _pop_count(c: dict[str, Any], name: str, where: str) -> int | None:
    value = c.pop(name, None)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or value < 0):
        raise TypeError(f"{where}: {name} must be a non-negative int, got {value!r}")
    return value


def _copy_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_json(v) for v in value]
    return value


_SUPPORTED = ("str, int, float, bool, Literal[...] of strs or ints, list[X], dict[str, Any], a "
              "Params subclass, or X | None")


def _compile(tp: Any, c: dict[str, Any], where: str, stack: tuple[type, ...]) -> _Kind:
    """The kind for an annotation; pops the constraints it uses from ``c``."""
    origin = get_origin(tp)
    if origin is Union or origin is UnionType:
        args = get_args(tp)
        if len(args) == 2 and NoneType in args:
            return _Nullable(_compile(args[0] if args[1] is NoneType else args[1], c, where,
                                      stack))
        raise TypeError(f"{where}: unsupported union {tp!r}; the only union allowed is X | None")
    if tp is bool:
        return _Bool()
    if tp is int:
        return _Int(c, where)
    if tp is float:
        return _Num(c, where)
    if tp is str:
        return _Str(c, where)
    if origin is Literal:
        return _Enum(get_args(tp), where)
    if origin is list and len(get_args(tp)) == 1:
        return _List(get_args(tp)[0], c, where, stack)
    if origin is dict and get_args(tp) == (str, Any):
        return _Dict()
    if isinstance(tp, type) and issubclass(tp, Params) and tp is not Params:
        return _Object(tp, stack)
    raise TypeError(f"{where}: unsupported type {tp!r}; use {_SUPPORTED}")


# -- resolved classes ------------------------------------------------------------------------

class ParamField:
    """A resolved field of a params class (see ``Params.param_fields``)."""

    __slots__ = ("annotation", "default", "description", "kind", "name")

    def __init__(self, name: str, annotation: Any, kind: _Kind, default: Any,
                 description: str | None) -> None:
        self.name = name
        self.annotation = annotation
        self.kind = kind
        self.default = default
        self.description = description

    @property
    def required(self) -> bool:
        return self.default is MISSING

    def fresh_default(self) -> Any:
        return self.kind.copy(self.default) if self.kind.mutable else self.default

    def __repr__(self) -> str:
        return f"ParamField({self.name!r}, {self.annotation!r}, default={self.default!r})"


class _Info:
    __slots__ = ("allow_extra", "by_name", "fields", "names", "schema")

    def __init__(self, fields: list[ParamField], allow_extra: bool) -> None:
        self.fields = fields
        self.by_name = {f.name: f for f in fields}
        self.names = list(self.by_name)
        self.allow_extra = allow_extra
        props: dict[str, Any] = {}
        for f in fields:
            s = f.kind.schema()
            if f.description:
                s["description"] = f.description
            if not f.required:
                s["default"] = f.kind.dump(f.default)
            props[f.name] = s
        schema: dict[str, Any] = {"type": "object", "properties": props}
        required = [f.name for f in fields if f.required]
        if required:
            schema["required"] = required
        if not allow_extra:
            schema["additionalProperties"] = False
        self.schema = schema

    def collect(self, data: Mapping[Any, Any], path: _Path, sink: _Sink) -> dict[str, Any] | None:
        before = sink.count
        if not self.allow_extra:
            for key in data:
                if key not in self.by_name:
                    sink.add(path, _unknown_message(key, self.names))
        values: dict[str, Any] = {}
        for f in self.fields:
            if f.name in data:
                values[f.name] = f.kind.check(data[f.name], (*path, f.name), sink)
            elif f.required:
                sink.add((*path, f.name), "required")
            else:
                values[f.name] = f.fresh_default()
        return values if sink.count == before else None


def _unknown_message(key: Any, names: list[str]) -> str:
    if not isinstance(key, str):
        return f"unknown property {key!r} (property names are strings)"
    hint = _did_you_mean(key, names)
    return f"unknown property {_describe(key)}" + (f" ({hint})" if hint else "")


def _info(cls: type[Params], stack: tuple[type, ...] = ()) -> _Info:
    info = cls.__dict__.get("_params_info")
    if info is None:
        # Two threads may resolve at once: both build the same thing and one assignment wins.
        info = _resolve(cls, stack)
        cls._params_info = info
    return info


def _resolve(cls: type[Params], stack: tuple[type, ...]) -> _Info:
    if cls is Params:
        raise TypeError("Params itself has no fields: subclass it")
    if cls in stack:
        chain = " -> ".join(c.__name__ for c in (*stack, cls))
        raise TypeError(f"params class {cls.__name__} contains itself ({chain}); recursive "
                        "schemas are not supported")
    stack = (*stack, cls)
    declared: dict[str, tuple[Any, Any, type]] = {}
    for klass in reversed(cls.__mro__):
        if klass is Params or not issubclass(klass, Params):
            continue
        module = sys.modules.get(klass.__module__)
        globalns = vars(module) if module is not None else {}
        # Classes nested in the class body may be named too, but not its other attributes:
        # a field's ParamInfo must never shadow a type of the same name.
        localns = {**klass.__dict__.get("_params_localns", {}),
                   **{k: v for k, v in vars(klass).items() if isinstance(v, type)}}
        # inspect.get_annotations would do the same, but importing inspect costs ~6 ms.
        own = klass.__dict__.get("__annotations__", {})  # noqa: RUF063
        for name, annotation in own.items():
            tp = annotation
            if isinstance(tp, str):  # from __future__ import annotations
                # The string is the class's own source text, evaluated as get_type_hints would.
                try:
                    tp = eval(tp, globalns, localns)
                except Exception as exc:
                    raise TypeError(
                        f"{klass.__qualname__}.{name}: cannot resolve the annotation "
                        f"{annotation!r} ({type(exc).__name__}: {exc}). Define the types it "
                        "names at module level, or earlier in the same function.") from None
            if tp is ClassVar or get_origin(tp) is ClassVar:
                continue
            # A redeclared field keeps its first position, as in dataclasses.
            declared[name] = (tp, klass.__dict__.get(name, MISSING), klass)
    fields = [_make_field(name, tp, value, f"{klass.__qualname__}.{name}", stack)
              for name, (tp, value, klass) in declared.items()]
    return _Info(fields, bool(cls.__dict__.get("_allow_extra", False)))


def _make_field(name: str, tp: Any, value: Any, where: str, stack: tuple[type, ...]
                ) -> ParamField:
    if name.startswith("_"):
        raise TypeError(f"{where}: field names must not start with '_'")
    if name in _RESERVED:
        raise TypeError(f"{where}: {name!r} is a Params method name; choose another name")
    info = value if isinstance(value, ParamInfo) else ParamInfo(default=value)
    if info.description is not None and not isinstance(info.description, str):
        raise TypeError(f"{where}: description must be a string")
    constraints = info.constraints()
    kind = _compile(tp, constraints, where, stack)
    if constraints:
        raise TypeError(f"{where}: {', '.join(constraints)} does not apply to {tp!r}")
    default = info.default
    if default is not MISSING:
        sink = _Sink()
        checked = kind.check(default, (), sink)
        if sink.count:
            hint = " (declare the type as X | None to allow null)" if default is None else ""
            raise TypeError(f"{where}: the default {default!r} is invalid: "
                            f"{sink.problems[0].message}{hint}")
        default = checked
    return ParamField(name, tp, kind, default, info.description)


def _parse_object(cls: type[Params], data: Any, path: _Path, sink: _Sink) -> Any:
    if isinstance(data, cls):  # from Python code: already checked when it was made
        return data
    if not isinstance(data, Mapping):
        sink.add(path, f"must be an object (got {_describe(data)})")
        return _BAD
    values = _info(cls).collect(data, path, sink)
    if values is None:
        return _BAD
    obj = object.__new__(cls)
    obj.__dict__.update(values)  # bypasses the frozen __setattr__
    return obj


# -- the base class --------------------------------------------------------------------------

@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(param,))
class Params:
    """Base of tool parameter classes: annotate fields, optionally with ``param(...)``.

    Instances are frozen and always valid: construction (``Cls(a=1)``), ``parse`` and
    ``replace`` run the same checks and raise ParamsError.
    """

    _allow_extra: ClassVar[bool] = False
    _params_info: ClassVar[_Info | None] = None
    _params_localns: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, *, allow_extra: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._allow_extra = allow_extra
        # A class declared inside a function may name that function's locals in its
        # annotations; resolution happens later, so keep a snapshot of them.
        frame = sys._getframe(1)
        while frame.f_code.co_name == "__init_subclass__" and frame.f_back is not None:
            frame = frame.f_back
        if frame.f_locals is not frame.f_globals:
            cls._params_localns = dict(frame.f_locals)

    def __init__(self, **values: Any) -> None:
        cls = type(self)
        sink = _Sink()
        collected = _info(cls).collect(values, (), sink)
        if collected is None:
            raise ParamsError(sink.problems, total=sink.count, params_cls=cls)
        self.__dict__.update(collected)

    @classmethod
    def parse(cls, data: object) -> Self:
        """The instance for a JSON object (a model's tool input); raises ParamsError."""
        sink = _Sink()
        result = _parse_object(cls, data, (), sink)
        if result is _BAD:
            got_type = None if isinstance(data, Mapping) else type(data).__name__
            raise ParamsError(sink.problems, total=sink.count, params_cls=cls,
                              got_type=got_type)
        instance: Self = result  # _parse_object(cls, ...) returns a cls or _BAD
        return instance

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The input schema (Draft 2020-12): a fresh copy of a cached, byte-stable dict."""
        schema: dict[str, Any] = _copy_json(_info(cls).schema)
        return schema

    @classmethod
    def param_fields(cls) -> tuple[ParamField, ...]:
        return tuple(_info(cls).fields)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values of every field, defaults included: ``parse`` gives ``self`` back."""
        return {f.name: f.kind.dump(self.__dict__[f.name]) for f in _info(type(self)).fields}

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields changed, checked like a new instance."""
        return type(self)(**{**self.__dict__, **changes})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen; use .replace({name}=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self), *self.__dict__.values()))

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"{type(self).__name__}({body})"


_RESERVED = frozenset(name for name in dir(Params) if not name.startswith("_"))
