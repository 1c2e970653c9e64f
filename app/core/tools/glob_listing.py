"""What glob_search's two implementations share, so they take and answer exactly alike: the
built-in tool (app.core.tools.builtin.glob_search, which walks in Python) and the CLI provider's
(app.core.tools.providers.cli, whose folder walk runs on fd).

The input (``GlobSearchParams``, checked by ``parse_glob_input``), where a pattern's walk starts
(``split_pattern``) and the output (``format_glob_results``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from app.core.globs import has_glob_magic
from app.core.tools.arguments import ToolInputError
from app.core.tools.fs.paths import absolute_path, check_path_text, visible_name
from app.core.tools.params.declaration import Params, param
from app.core.tools.params.problems import ParamsError

DEFAULT_MAX_RESULTS = 100
MAX_RESULTS_LIMIT = 5000


class GlobSearchParams(Params):
    pattern: str = param(min_length=1,
                         description="Glob pattern, e.g. '**/*.ts' or 'src/*/index.js'.")
    # None (omitted) is not ".": a missing folder named by base_dir is an error, not "no match".
    base_dir: str | None = param(default=None,
                                 description="Folder to search in (default: working directory).")
    max_results: int = param(default=DEFAULT_MAX_RESULTS, minimum=1, maximum=MAX_RESULTS_LIMIT,
                             description=f"Most paths to return (default "
                                         f"{DEFAULT_MAX_RESULTS}).")


def split_pattern(pattern: str, base_dir: str | None,
                  project_root: str | os.PathLike[str] | None) -> tuple[str, str]:
    """Move the literal leading folders of a pattern into the base dir.

    ``src/**/*.py`` under ``.`` becomes base ``./src``, pattern ``**/*.py``; an absolute or
    ``~`` pattern gets its own base. Returns (absolute base, remaining pattern).
    """
    pattern = os.path.expanduser(pattern) if pattern.startswith("~") else pattern
    if base_dir or project_root is None:
        base = absolute_path(base_dir or ".", project_root)
    else:
        base = os.fspath(project_root)
    if os.path.isabs(pattern):
        base, pattern = os.sep, pattern.lstrip("/" + os.sep)
    parts = pattern.replace(os.sep, "/").split("/")
    literal: list[str] = []
    while len(parts) > 1 and not has_glob_magic(parts[0]):
        literal.append(parts.pop(0))
    literal = [p for p in literal if p not in ("", ".")]
    if literal:
        base = os.path.join(base, *literal)
    return base, "/".join(p for p in parts if p != "") or "*"


def parse_glob_input(input: Mapping[str, Any]) -> GlobSearchParams:
    """The checked input, or ParamsError/FsError saying what is wrong."""
    p = GlobSearchParams.parse(input)
    # What the schema cannot say about a path: no NUL, not blank, not absurdly long.
    check_path_text(p.pattern, "pattern")
    if p.base_dir is not None:
        check_path_text(p.base_dir, "base_dir")
    return p


def parse_glob_args(input: Mapping[str, Any]) -> tuple[str, str | None, int]:
    """(pattern, base_dir, max_results), or ToolInputError/FsError saying what is wrong.

    For the fd-backed variant, which falls back to the built-in on errors.
    """
    try:
        p = parse_glob_input(input)
    except ParamsError as err:
        raise ToolInputError(err.message_for("glob_search")) from None
    return p.pattern, p.base_dir, p.max_results


def format_glob_results(found: list[tuple[float, str]], rest: str, shown_base: str,
                        max_results: int, stopped: str | None, errors: list[str]) -> str:
    """The tool's output: newest first, a truncation marker, incomplete-search notes.

    Shared with the CLI provider's fd-backed variant, so both read exactly alike.
    """
    found.sort(key=lambda t: (-t[0], t[1]))
    lines: list[str] = []
    total = len(found)
    where = f"under {shown_base}" if shown_base != "." else "in the working directory"
    if not total:
        lines.append(f"No files match {rest!r} {where} (files ignored by .gitignore and the .git "
                     "folder are not searched).")
    else:
        shown_n = min(total, max_results)
        lines.append(f"Found {total} path{'s' if total != 1 else ''} matching {rest!r} {where}"
                     f", newest first:")
        lines.extend(p for _, p in found[:shown_n])
        if total > shown_n:
            lines.append(f"[Showing {shown_n} of {total} paths. Narrow the pattern or base_dir, "
                         f"or raise max_results (up to {MAX_RESULTS_LIMIT}).]")
    if stopped:
        lines.append(f"[Search incomplete: {stopped}. Narrow base_dir or the pattern.]")
    if errors:
        lines.append(f"[{len(errors)} folder(s) could not be read, e.g. "
                     f"{visible_name(errors[0])}]")
    return "\n".join(lines)
