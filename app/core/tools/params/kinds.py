"""The value kinds of params classes (app.core.tools.params.declaration): for each supported
annotation, the JSON schema fragment and the check that matches it, so the two can never disagree.

One set of rules, shared by the schema and the parser (the property tests check the parser
against jsonschema's Draft 2020-12 validator on the schema):

- ``int`` accepts integral floats (3.0 becomes 3): JSON Schema's "integer" is any number without
  a fraction part, and models sometimes send 3.0. ``bool`` is never a number.
- ``float`` accepts ints and floats and stores a float.
- ``X | None`` accepts null. Other fields reject null even when they have a default: the model is
  told to omit the property instead, rather than having null silently mean "default".
- ``min_length``/``max_length`` count a string's characters or a list's items. On a list field
  the other constraints (minimum, maximum, exclusive_*, pattern) apply to each item.
- ``pattern`` is searched, not anchored, as in JSON Schema: write ``^...$`` to match it whole.
- Literal[...] of strings (or of ints) is an enum; nested Params classes are inlined objects;
  ``dict[str, Any]`` is an unchecked object passed through.

Only reachable from Python, never from JSON, hence outside that agreement: NaN and infinities,
and ints too large for a float in a float field, are rejected; non-string keys are unknown.

Separate from the declaration and resolution of params classes: this is the vocabulary of
values (numbers, strings, enums, lists, objects, null), which ``params._compile`` picks from;
nested params classes are the one kind defined there, as they need the class machinery.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from app.core.tools.params.problems import FieldPath, ProblemSink, describe, did_you_mean

BAD: Any = object()  # what a check returns after it reported a problem


# -- value kinds: each is one schema fragment and the check that matches it -------------------

class Kind:
    """One annotation's meaning: its schema fragment, its check, and how a checked value is
    dumped to JSON and copied for a new instance."""

    json_type = ""
    mutable = False  # values that need a fresh copy per instance (lists, dicts)

    def schema(self) -> dict[str, Any]:
        return {"type": self.json_type}

    def check(self, value: Any, path: FieldPath, sink: ProblemSink) -> Any:
        raise NotImplementedError

    def dump(self, value: Any) -> Any:
        """The JSON form of a checked value."""
        return value

    def copy(self, value: Any) -> Any:
        return value


class _Bounded(Kind):
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

    def in_bounds(self, v: float, path: FieldPath, sink: ProblemSink) -> bool:
        if self.minimum is not None and v < self.minimum:
            sink.add(path, f"must be at least {describe(self.minimum)} (got {describe(v)})")
        elif self.exclusive_minimum is not None and v <= self.exclusive_minimum:
            sink.add(path, f"must be greater than {describe(self.exclusive_minimum)} "
                           f"(got {describe(v)})")
        elif self.maximum is not None and v > self.maximum:
            sink.add(path, f"must be at most {describe(self.maximum)} (got {describe(v)})")
        elif self.exclusive_maximum is not None and v >= self.exclusive_maximum:
            sink.add(path, f"must be less than {describe(self.exclusive_maximum)} "
                           f"(got {describe(v)})")
        else:
            return True
        return False


class IntKind(_Bounded):
    json_type = "integer"

    def check(self, value: Any, path: FieldPath, sink: ProblemSink) -> Any:
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or (isinstance(value, float) and not value.is_integer())):  # NaN, inf too
            sink.add(path, f"must be an integer (got {describe(value)})")
            return BAD
        # Bounds first, on the value as sent, so a message shows 1e+300 rather than its digits.
        return int(value) if self.in_bounds(value, path, sink) else BAD


class NumberKind(_Bounded):
    json_type = "number"

    def check(self, value: Any, path: FieldPath, sink: ProblemSink) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            sink.add(path, f"must be a number (got {describe(value)})")
            return BAD
        if isinstance(value, float) and not math.isfinite(value):
            sink.add(path, f"must be a finite number (got {describe(value)})")
            return BAD
        if not self.in_bounds(value, path, sink):  # compared exactly, before any rounding
            return BAD
        try:
            return float(value)
        except OverflowError:
            sink.add(path, f"must be a number below 1.8e308 in size (got {describe(value)})")
            return BAD


class BoolKind(Kind):
    json_type = "boolean"

    def check(self, value: Any, path: FieldPath, sink: ProblemSink) -> Any:
        if value is True or value is False:
            return value
        sink.add(path, f"must be true or false (got {describe(value)})")
        return BAD


class StrKind(Kind):
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

    def check(self, value: Any, path: FieldPath, sink: ProblemSink) -> Any:
        if not isinstance(value, str):
            sink.add(path, f"must be a string (got {describe(value)})")
            return BAD
        n = len(value)  # code points, as JSON Schema counts them
        if self.min_length is not None and n < self.min_length:
            got = "an empty string" if n == 0 else f"{n}"
            sink.add(path, f"must be at least {self.min_length} characters long (got {got})")
        elif self.max_length is not None and n > self.max_length:
            sink.add(path, f"must be at most {self.max_length} characters long (got {n})")
        elif self.regex is not None and self.regex.search(value) is None:
            sink.add(path, f"must match the regular expression {self.pattern!r} "
                           f"(got {describe(value)})")
        else:
            return value
        return BAD


class EnumKind(Kind):
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

    def check(self, value: Any, path: FieldPath, sink: ProblemSink) -> Any:
        if self.json_type == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)
        same_type = (isinstance(value, str) if self.json_type == "string"
                     else isinstance(value, int) and not isinstance(value, bool))
        if same_type and value in self.values:
            return value
        got = describe(value)
        if isinstance(value, str) and self.json_type == "string":
            hint = did_you_mean(value, list(self.values))
            got += f"; {hint}" if hint else ""
        options = ", ".join(repr(v) for v in self.values)
        sink.add(path, f"must be one of {options} (got {got})")
        return BAD


class ListKind(Kind):
    json_type = "array"
    mutable = True

    def __init__(self, c: dict[str, Any], where: str,
                 compile_item: Callable[[dict[str, Any]], Kind]) -> None:
        """``compile_item`` makes the item's kind from the constraints left once the list's
        own (``min_length``, ``max_length``) are taken: the rest constrain each item."""
        self.min_items = _pop_count(c, "min_length", where)
        self.max_items = _pop_count(c, "max_length", where)
        self.item = compile_item(c)

    def schema(self) -> dict[str, Any]:
        s: dict[str, Any] = {"type": "array", "items": self.item.schema()}
        if self.min_items is not None:
            s["minItems"] = self.min_items
        if self.max_items is not None:
            s["maxItems"] = self.max_items
        return s

    def check(self, value: Any, path: FieldPath, sink: ProblemSink) -> Any:
        if not isinstance(value, list):
            sink.add(path, f"must be an array (got {describe(value)})")
            return BAD
        n = len(value)
        if self.min_items is not None and n < self.min_items:
            sink.add(path, f"must have at least {self.min_items} items (got {n})")
            return BAD
        if self.max_items is not None and n > self.max_items:
            sink.add(path, f"must have at most {self.max_items} items (got {n})")
            return BAD
        before = sink.count
        out = [self.item.check(v, (*path, i), sink) for i, v in enumerate(value)]
        return out if sink.count == before else BAD

    def dump(self, value: Any) -> Any:
        return [self.item.dump(v) for v in value]

    def copy(self, value: Any) -> Any:
        return [self.item.copy(v) for v in value]


class DictKind(Kind):
    json_type = "object"
    mutable = True

    def check(self, value: Any, path: FieldPath, sink: ProblemSink) -> Any:
        if not isinstance(value, Mapping):
            sink.add(path, f"must be an object (got {describe(value)})")
            return BAD
        return copy_json(dict(value))

    def copy(self, value: Any) -> Any:
        return copy_json(value)

    dump = copy


class NullableKind(Kind):
    def __init__(self, inner: Kind) -> None:
        self.inner = inner
        self.mutable = inner.mutable

    def schema(self) -> dict[str, Any]:
        s = self.inner.schema()
        s["type"] = [s["type"], "null"]
        if "enum" in s:
            s["enum"] = [*s["enum"], None]
        return s

    def check(self, value: Any, path: FieldPath, sink: ProblemSink) -> Any:
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


def copy_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value
