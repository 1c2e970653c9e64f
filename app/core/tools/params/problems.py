"""What a failed parameter check reports: ``Problem`` (where and what), ``ParamsError`` (all of
them, and the message the model reads) and the short renderings of values those messages use.

Separate from the params classes (app.core.tools.params.declaration) and the value kinds
(app.core.tools.params.kinds), which both report through it: the wording and the bounds on how
much of a hostile input a message repeats are one concern, kept in one place.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, Protocol

# A hostile or broken call can hold a million bad items: keep a bounded sample, count the rest.
_MAX_PROBLEMS_KEPT = 100
# How many problems message_for lists, as the registry did for jsonschema errors.
_MAX_PROBLEMS_SHOWN = 5
# Longer strings are cut in messages: the model needs to recognise its value, not reread it.
_MAX_SHOWN_CHARS = 60

# Where a value is in the input: property names and list indexes from the top.
FieldPath = tuple[str | int, ...]


class DeclaredField(Protocol):
    """A field of a params class, as an error message names it (``ParamField``)."""

    @property
    def name(self) -> str: ...

    @property
    def required(self) -> bool: ...


class DeclaredFields(Protocol):
    """A params class, as an error message lists its fields: ``Params`` subclasses are these
    (named by this protocol so that the messages need not know the class machinery)."""

    def param_fields(self) -> Sequence[DeclaredField]: ...


class Problem(NamedTuple):
    """One thing wrong with an input: where (``args/files/0``; "" for the object) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ParamsError(ValueError):
    """Input that does not match a params class; ``problems`` says what, in declaration order."""

    def __init__(self, problems: list[Problem], *, total: int | None = None,
                 params_cls: DeclaredFields | None = None, got_type: str | None = None) -> None:
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
            fields = self.params_cls.param_fields()
            props = ", ".join(f.name for f in fields)
            required = ", ".join(f.name for f in fields if f.required)
        return (f"Invalid input for {tool_name}:\n" + "\n".join(lines) +
                f"\nExpected properties: {props or '(none)'}; required: "
                f"{required or '(none)'}. Fix the input and call the tool again.")


class ProblemSink:
    """Collects problems; paths become strings only for the problems kept."""

    __slots__ = ("count", "problems")

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.count = 0

    def add(self, path: FieldPath, message: str) -> None:
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


def describe(value: Any) -> str:
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


def did_you_mean(word: str, choices: list[str]) -> str:
    if len(word) > 200:  # difflib is quadratic; nobody misspells a 200-character name
        return ""
    import difflib  # only on the error path: start-up does not pay for it

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else ""
