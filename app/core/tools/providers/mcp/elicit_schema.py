"""The form an MCP elicitation asks for: its requested schema read into fields, and the
person's entries checked against them.

MCP restricts ``requestedSchema`` to a flat object of primitive properties: strings (with
``minLength``/``maxLength`` and ``format`` email, uri, date, date-time), numbers and integers
(``minimum``/``maximum``), booleans, single-choice enums (``enum`` with optional
``enumNames``, or ``oneOf`` of ``{const, title}``) and multiple-choice ones (an ``array`` whose
``items`` are such an enum, with ``minItems``/``maxItems``). Anything else is ``UnsupportedSchema``,
which Tebiki answers with a decline rather than guessing at a form.

An entry left empty is "not given": it is left out of the answer (a default is shown to the
person, never filled in for them), and a required field left empty is an error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal
from urllib.parse import urlsplit

FieldKind = Literal["string", "number", "integer", "boolean", "enum", "multi"]
STRING_FORMATS = ("email", "uri", "date", "date-time")
MAX_FIELDS = 50
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class UnsupportedSchema(ValueError):
    """The requested schema is not a form Tebiki can show; the message says why."""


class FieldError(ValueError):
    """An entry does not fit its field; the message is for the person."""


@dataclass(frozen=True)
class FormField:
    name: str
    kind: FieldKind
    title: str
    description: str = ""
    required: bool = False
    default: Any = None
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    format: str | None = None
    # enum and multi fields: (value, label) pairs in the server's order; for multi,
    # min_length / max_length bound how many are chosen.
    options: tuple[tuple[str, str], ...] = ()

    def hint(self) -> str:
        """The field's constraints and default in words, for the form."""
        parts = []
        if self.format:
            parts.append({"email": "an email address", "uri": "a URL",
                          "date": "a date (YYYY-MM-DD)",
                          "date-time": "a date and time (ISO 8601)"}[self.format])
        unit = "chosen" if self.kind == "multi" else "characters"
        if self.min_length is not None:
            parts.append(f"at least {self.min_length} {unit}")
        if self.max_length is not None:
            parts.append(f"at most {self.max_length} {unit}")
        if self.minimum is not None:
            parts.append(f"at least {_number(self.minimum)}")
        if self.maximum is not None:
            parts.append(f"at most {_number(self.maximum)}")
        if self.default is not None:
            parts.append(f"suggested: {self.default_label()}")
        return "; ".join(parts)

    def default_label(self) -> str:
        if self.kind == "boolean":
            return "yes" if self.default else "no"
        labels = dict(self.options)
        if self.kind == "enum":
            return labels.get(str(self.default), str(self.default))
        if self.kind == "multi":
            return ", ".join(labels.get(str(v), str(v)) for v in self.default)
        return str(self.default)

    def convert(self, raw: Any) -> Any:
        """The value for an entry (text, a bool, an option value), or None when left empty;
        raises FieldError when it does not fit."""
        if raw is None or (isinstance(raw, str) and raw.strip() == "" and self.kind != "string"):
            return None
        if self.kind == "boolean":
            if not isinstance(raw, bool):
                raise FieldError("choose yes or no")
            return raw
        if self.kind == "enum":
            if str(raw) not in {value for value, _label in self.options}:
                raise FieldError("choose one of the options")
            return str(raw)
        if self.kind == "multi":
            return self._choices(raw)
        text = str(raw)
        if self.kind == "string":
            return self._string(text) if text != "" else None
        return self._number(text.strip())

    def _string(self, text: str) -> str:
        if self.min_length is not None and len(text) < self.min_length:
            raise FieldError(f"must be at least {self.min_length} characters")
        if self.max_length is not None and len(text) > self.max_length:
            raise FieldError(f"must be at most {self.max_length} characters")
        if self.format is not None and not _fits_format(text, self.format):
            raise FieldError(f"is not {self.hint().split(';')[0]}")
        return text

    def _choices(self, raw: Any) -> list[str] | None:
        values = {value for value, _label in self.options}
        if not isinstance(raw, list | tuple) or not all(str(v) in values for v in raw):
            raise FieldError("choose among the options")
        if not raw:
            return None
        if self.min_length is not None and len(raw) < self.min_length:
            raise FieldError(f"choose at least {self.min_length}")
        if self.max_length is not None and len(raw) > self.max_length:
            raise FieldError(f"choose at most {self.max_length}")
        return [str(v) for v in raw]

    def _number(self, text: str) -> int | float:
        value: int | float
        try:
            value = int(text) if self.kind == "integer" else float(text)
        except ValueError:
            raise FieldError("must be a whole number" if self.kind == "integer"
                             else "must be a number") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise FieldError("must be a finite number")
        if self.minimum is not None and value < self.minimum:
            raise FieldError(f"must be at least {_number(self.minimum)}")
        if self.maximum is not None and value > self.maximum:
            raise FieldError(f"must be at most {_number(self.maximum)}")
        return value


@dataclass(frozen=True)
class ElicitationForm:
    fields: tuple[FormField, ...]

    def collect(self, entries: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """The answer's content from the entries by field name, and the errors by field name
        (a required field left empty, an entry that does not fit)."""
        content: dict[str, Any] = {}
        errors: dict[str, str] = {}
        for f in self.fields:
            try:
                value = f.convert(entries.get(f.name))
            except FieldError as exc:
                errors[f.name] = str(exc)
                continue
            if value is None:
                if f.required:
                    errors[f.name] = "is required"
            else:
                content[f.name] = value
        return content, errors


def parse_form(schema: Any) -> ElicitationForm:
    """The form for a requested schema; raises UnsupportedSchema for anything else."""
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        raise UnsupportedSchema("the requested schema is not an object")
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        raise UnsupportedSchema("the requested schema has no properties")
    if len(properties) > MAX_FIELDS:
        raise UnsupportedSchema(f"the form has more than {MAX_FIELDS} fields")
    required = schema.get("required") or []
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise UnsupportedSchema("'required' is not a list of names")
    unknown = set(required) - set(properties)
    if unknown:
        raise UnsupportedSchema(f"required fields without a definition: {sorted(unknown)}")
    return ElicitationForm(tuple(_field(str(name), prop, name in required)
                                 for name, prop in properties.items()))


def _field(name: str, prop: Any, required: bool) -> FormField:
    if not isinstance(prop, Mapping):
        raise UnsupportedSchema(f"field {name!r} is not a schema object")
    kind = prop.get("type")
    title = str(prop.get("title") or name)
    common: dict[str, Any] = {"name": name, "title": title, "required": required,
                              "description": str(prop.get("description") or "")}
    if kind in ("string", None) and ("enum" in prop or "oneOf" in prop):
        options = _options(name, prop)
        default = prop.get("default")
        return FormField(kind="enum", options=options,
                         default=default if default in dict(options) else None, **common)
    if kind == "string":
        fmt = prop.get("format")
        if fmt is not None and fmt not in STRING_FORMATS:
            raise UnsupportedSchema(f"field {name!r} has an unsupported format {fmt!r}")
        return FormField(kind="string", format=fmt,
                         min_length=_bound(name, prop, "minLength", whole=True),
                         max_length=_bound(name, prop, "maxLength", whole=True),
                         default=_typed_default(prop, str), **common)
    if kind in ("number", "integer"):
        return FormField(kind=kind, minimum=_bound(name, prop, "minimum"),
                         maximum=_bound(name, prop, "maximum"),
                         default=_typed_default(prop, int | float), **common)
    if kind == "boolean":
        return FormField(kind="boolean", default=_typed_default(prop, bool), **common)
    if kind == "array":
        items = prop.get("items")
        if not isinstance(items, Mapping) or not ("enum" in items or "anyOf" in items):
            raise UnsupportedSchema(f"field {name!r} is a list of something other than choices")
        options = _options(name, {"oneOf": items["anyOf"]} if "anyOf" in items else items)
        default = prop.get("default")
        if not (isinstance(default, list) and all(v in dict(options) for v in default)):
            default = None
        return FormField(kind="multi", options=options, default=default,
                         min_length=_bound(name, prop, "minItems", whole=True),
                         max_length=_bound(name, prop, "maxItems", whole=True), **common)
    raise UnsupportedSchema(f"field {name!r} has an unsupported type {kind!r}")


def _options(name: str, prop: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    if "enum" in prop:
        values = prop["enum"]
        labels = prop.get("enumNames") or values
        if not isinstance(values, list) or not values or not all(
                isinstance(v, str) for v in values) or not isinstance(labels, list) \
                or len(labels) != len(values):
            raise UnsupportedSchema(f"field {name!r} has a malformed enum")
        return tuple((v, str(label)) for v, label in zip(values, labels, strict=True))
    choices = prop["oneOf"]
    if not isinstance(choices, list) or not choices or not all(
            isinstance(c, Mapping) and isinstance(c.get("const"), str) for c in choices):
        raise UnsupportedSchema(f"field {name!r} has a malformed oneOf")
    return tuple((c["const"], str(c.get("title") or c["const"])) for c in choices)


def _bound(name: str, prop: Mapping[str, Any], key: str, whole: bool = False) -> Any:
    value = prop.get(key)
    if value is None:
        return None
    ok = isinstance(value, int) if whole else isinstance(value, int | float)
    if not ok or isinstance(value, bool):
        raise UnsupportedSchema(f"field {name!r} has a malformed {key}")
    return value


def _typed_default(prop: Mapping[str, Any], kind: Any) -> Any:
    value = prop.get("default")
    if isinstance(value, bool) and kind is not bool:
        return None
    return value if isinstance(value, kind) else None


def _fits_format(text: str, fmt: str) -> bool:
    if fmt == "email":
        return bool(_EMAIL.match(text))
    if fmt == "uri":
        parts = urlsplit(text)
        return bool(parts.scheme and (parts.netloc or parts.path)) and " " not in text
    try:
        if fmt == "date":
            date.fromisoformat(text)
        elif "T" not in text.upper():  # a date alone is not a date and time
            return False
        else:
            datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _number(value: float) -> str:
    return f"{value:g}"
