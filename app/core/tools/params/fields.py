"""A resolved params class (app.core.tools.params.declaration): its fields (``ParamField``), the
JSON schema built from them, and collecting an input object's values field by field.

Separate from the declaration and resolution in declaration.py: this is what resolution produces
and what parsing, construction and ``json_schema`` use afterwards; it knows nothing of
annotations or of the ``Params`` base class.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.tools.params.kinds import Kind
from app.core.tools.params.problems import FieldPath, ProblemSink, describe, did_you_mean


class _MissingType:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _MissingType()
"""Marks "no default": the field is required."""


class ParamField:
    """A resolved field of a params class (see ``Params.param_fields``)."""

    __slots__ = ("annotation", "default", "description", "kind", "name")

    def __init__(self, name: str, annotation: Any, kind: Kind, default: Any,
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


class ResolvedParams:
    """A params class resolved: its fields, its schema, and how an input's values are collected
    (``collect``)."""

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

    def collect(self, data: Mapping[Any, Any], path: FieldPath,
                sink: ProblemSink) -> dict[str, Any] | None:
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
    hint = did_you_mean(key, names)
    return f"unknown property {describe(key)}" + (f" ({hint})" if hint else "")
