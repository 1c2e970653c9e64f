"""Helpers for reading dict tool arguments, with messages telling the model how to fix a call.

Used by the tools not yet converted to params models (``app.core.tools.params.declaration``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from app.core.tools.base import SubjectError
from app.core.tools.fs.errors import FsError
from app.core.tools.fs.paths import resolve_for_subject


class ToolInputError(ValueError):
    """A bad argument, with a message telling the model how to fix the call."""


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
