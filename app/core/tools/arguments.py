"""Helpers for reading dict tool arguments, with messages telling the model how to fix a call.

Used by the tools not yet converted to params models (``app.core.tools.params.declaration``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from app.core.tools.base import SubjectError
from app.core.tools.fs.errors import FsError
from app.core.tools.fs.paths import resolve_for_subject


class ToolInputError(ValueError):
    """A bad argument, with a message telling the model how to fix the call."""


def arg_str(args: Mapping[str, Any], name: str, default: str | None = None, *,
            required: bool = False, allow_empty: bool = True) -> str | None:
    value = args.get(name, default)
    if value is None:
        if required:
            raise ToolInputError(f"Missing required parameter '{name}'.")
        return None
    if not isinstance(value, str):
        raise ToolInputError(f"Parameter '{name}' must be a string, got "
                             f"{type(value).__name__}.")
    if not allow_empty and value == "":
        raise ToolInputError(f"Parameter '{name}' must not be empty.")
    return value


def arg_int(args: Mapping[str, Any], name: str, default: int | None, *, minimum: int = 0,
            maximum: int | None = None) -> int | None:
    value = args.get(name, default)
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or not math.isfinite(value) or value != int(value)):
        raise ToolInputError(f"Parameter '{name}' must be an integer, got {value!r}.")
    value = int(value)
    if value < minimum:
        raise ToolInputError(f"Parameter '{name}' must be at least {minimum}, got {value}.")
    if maximum is not None and value > maximum:
        raise ToolInputError(f"Parameter '{name}' must be at most {maximum}, got {value}.")
    return value


def arg_bool(args: Mapping[str, Any], name: str, default: bool) -> bool:
    value = args.get(name, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ToolInputError(f"Parameter '{name}' must be true or false, got {value!r}.")
    return value


def unknown_args(args: Mapping[str, Any], allowed: Sequence[str]) -> None:
    extra = sorted(set(args) - set(allowed))
    if extra:
        raise ToolInputError(f"Unknown parameter(s): {', '.join(extra)}. Allowed: "
                             f"{', '.join(allowed)}.")


def path_subjects(key: str, default: str | None = None) -> Callable[[Mapping[str, Any],
                                                                      Path | None], list[str]]:
    """A ToolSpec ``subjects_fn`` whose subject is the resolved path in ``args[key]``."""

    def subjects(args: Mapping[str, Any], project_root: Path | None) -> list[str]:
        raw = args.get(key, default)
        if raw is None and default is None:
            raise SubjectError(f"missing '{key}'")
        try:
            return [resolve_for_subject(raw, project_root)]
        except FsError as exc:
            partial = [raw] if isinstance(raw, str) and "\x00" not in raw else []
            raise SubjectError(str(exc), partial) from None

    return subjects
