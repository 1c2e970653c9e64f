"""Typed tool parameters: one class declaration gives the JSON schema and the parsed instance.

    class ReadFileParams(Params):
        path: str = param(description="File to read, relative to the project or absolute")
        offset: int = param(default=1, minimum=1, description="First line (1-based)")
        limit: int = param(default=2000, minimum=1, maximum=100_000, description="Max lines")

    ReadFileParams.json_schema()           # {"type": "object", "properties": {...}, ...}
    p = ReadFileParams.parse(tool_input)   # a frozen ReadFileParams, or raises ParamsError
    p.limit                                # an int, for mypy too (PEP 681 dataclass_transform)

Why not pydantic: importing it costs ~80 ms plus ~5-20 ms per model, and tool modules are
imported during start-up. These modules need only typing, re and math (all loaded by then), and a
class statement does almost nothing: annotations are resolved, checked and compiled on first use
(``json_schema``, ``parse``, construction), so forward references to later classes work and an
unused class costs nothing. A declaration mistake (unsupported type, a bound on a string, an
invalid default) raises TypeError at that first use, so test every params class's schema.

``param(default=..., ...)`` takes the default by keyword only: type checkers read field
specifiers' defaults from the ``default`` keyword, so a positional default would make the field
look required to mypy.

Unknown properties are errors, unless the class is declared ``class P(Params,
allow_extra=True)``: then the schema leaves additionalProperties open and extras are dropped.

This module is the declaration (``param``, ``Params``) and its resolution from annotations.
Next to it, one concern each: ``params.kinds`` holds what each annotation means (its schema
fragment and its check, and the rules they share), ``params.fields`` the resolved class (its
fields, schema, and collecting an input's values), ``params.problems`` what a failed check
reports (``ParamsError``, the messages the model reads).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import NoneType, UnionType
from typing import (
    Any,
    ClassVar,
    Literal,
    Self,
    TypeVar,
    Union,
    dataclass_transform,
    get_args,
    get_origin,
    overload,
)

from app.core.tools.params.fields import MISSING, ParamField, ResolvedParams
from app.core.tools.params.kinds import (
    BAD,
    BoolKind,
    DictKind,
    EnumKind,
    IntKind,
    Kind,
    ListKind,
    NullableKind,
    NumberKind,
    StrKind,
    copy_json,
)
from app.core.tools.params.problems import FieldPath, ParamsError, ProblemSink, describe

__all__ = ["ParamInfo", "Params", "param"]

T = TypeVar("T")


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


# -- nested params classes and the annotation compiler ----------------------------------

class _Object(Kind):
    json_type = "object"

    def __init__(self, cls: type[Params], stack: tuple[type, ...]) -> None:
        self.cls = cls
        self.info = _info(cls, stack)  # resolves the nested class now, so cycles are caught

    def schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = copy_json(self.info.schema)  # the caller may add keys
        return schema

    def check(self, value: Any, path: FieldPath, sink: ProblemSink) -> Any:
        return _parse_object(self.cls, value, path, sink)

    def dump(self, value: Any) -> Any:
        return value.to_dict()


_SUPPORTED = ("str, int, float, bool, Literal[...] of strs or ints, list[X], dict[str, Any], a "
              "Params subclass, or X | None")


def _compile(tp: Any, c: dict[str, Any], where: str, stack: tuple[type, ...]) -> Kind:
    """The kind for an annotation; pops the constraints it uses from ``c``."""
    origin = get_origin(tp)
    if origin is Union or origin is UnionType:
        args = get_args(tp)
        if len(args) == 2 and NoneType in args:
            return NullableKind(_compile(args[0] if args[1] is NoneType else args[1], c, where,
                                      stack))
        raise TypeError(f"{where}: unsupported union {tp!r}; the only union allowed is X | None")
    if tp is bool:
        return BoolKind()
    if tp is int:
        return IntKind(c, where)
    if tp is float:
        return NumberKind(c, where)
    if tp is str:
        return StrKind(c, where)
    if origin is Literal:
        return EnumKind(get_args(tp), where)
    if origin is list and len(get_args(tp)) == 1:
        item = get_args(tp)[0]
        return ListKind(c, where, lambda rest: _compile(item, rest, f"{where} items", stack))
    if origin is dict and get_args(tp) == (str, Any):
        return DictKind()
    if isinstance(tp, type) and issubclass(tp, Params) and tp is not Params:
        return _Object(tp, stack)
    raise TypeError(f"{where}: unsupported type {tp!r}; use {_SUPPORTED}")


# -- resolved classes ------------------------------------------------------------------------

def _info(cls: type[Params], stack: tuple[type, ...] = ()) -> ResolvedParams:
    info = cls.__dict__.get("_params_info")
    if info is None:
        # Two threads may resolve at once: both build the same thing and one assignment wins.
        info = _resolve(cls, stack)
        cls._params_info = info
    return info


def _resolve(cls: type[Params], stack: tuple[type, ...]) -> ResolvedParams:
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
    return ResolvedParams(fields, bool(cls.__dict__.get("_allow_extra", False)))


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
        sink = ProblemSink()
        checked = kind.check(default, (), sink)
        if sink.count:
            hint = " (declare the type as X | None to allow null)" if default is None else ""
            raise TypeError(f"{where}: the default {default!r} is invalid: "
                            f"{sink.problems[0].message}{hint}")
        default = checked
    return ParamField(name, tp, kind, default, info.description)


def _parse_object(cls: type[Params], data: Any, path: FieldPath, sink: ProblemSink) -> Any:
    if isinstance(data, cls):  # from Python code: already checked when it was made
        return data
    if not isinstance(data, Mapping):
        sink.add(path, f"must be an object (got {describe(data)})")
        return BAD
    values = _info(cls).collect(data, path, sink)
    if values is None:
        return BAD
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
    _params_info: ClassVar[ResolvedParams | None] = None
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
        sink = ProblemSink()
        collected = _info(cls).collect(values, (), sink)
        if collected is None:
            raise ParamsError(sink.problems, total=sink.count, params_cls=cls)
        self.__dict__.update(collected)

    @classmethod
    def parse(cls, data: object) -> Self:
        """The instance for a JSON object (a model's tool input); raises ParamsError."""
        sink = ProblemSink()
        result = _parse_object(cls, data, (), sink)
        if result is BAD:
            got_type = None if isinstance(data, Mapping) else type(data).__name__
            raise ParamsError(sink.problems, total=sink.count, params_cls=cls,
                              got_type=got_type)
        instance: Self = result  # _parse_object(cls, ...) returns a cls or BAD
        return instance

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The input schema (Draft 2020-12): a fresh copy of a cached, byte-stable dict."""
        schema: dict[str, Any] = copy_json(_info(cls).schema)
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
