"""glob_search: find files by name pattern, newest first.

Walks through ScopedFs's .gitignore-aware walker, so results match what grep_search searches:
ignored files and the .git folder never show up, symlinked folders are listed but not entered.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.core.globs import compile_glob, has_glob_magic
from app.core.tools.base import (
    RiskLevel,
    SubjectError,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
    reads_in_project,
)
from app.core.tools.config_fields import WALK_TIME_LIMIT_FIELD, ConfigField, FieldKind
from app.core.tools.fs.errors import FsError, InvalidPathError
from app.core.tools.fs.paths import (
    check_path_text,
    resolve_for_subject,
    visible_name,
)
from app.core.tools.fs.scope import ScopedFs
from app.core.tools.fs.walker import WalkStats, walk_tree
from app.core.tools.glob_listing import (
    GlobSearchParams,
    format_glob_results,
    parse_glob_input,
    split_pattern,
)
from app.core.tools.params.problems import ParamsError

MAX_VISITED = 2_000_000

# Read by the glob_search that walks with fd (app.core.tools.providers.cli), when fd is found.
USE_FD_FIELD = ConfigField(
    "use_fd", "Folder walk", FieldKind.CHOICE, default="auto",
    choices=(("auto", "Use fd when it is installed (faster)"),
             ("never", "Always walk in Python")))


def _subjects(args: Mapping[str, Any], project_root: Path | None) -> list[str]:
    pattern, base_dir = args.get("pattern"), args.get("base_dir")
    try:
        if not isinstance(pattern, str):
            raise InvalidPathError("pattern must be a string")
        check_path_text(pattern, "pattern")
        if base_dir is not None:
            check_path_text(base_dir, "base_dir")
        base, _ = split_pattern(pattern, base_dir, project_root)
        return [resolve_for_subject(base, project_root)]
    except FsError as exc:
        raise SubjectError(str(exc), [base_dir] if isinstance(base_dir, str) and
                           "\x00" not in base_dir else []) from None


class GlobSearchTool:
    spec = ToolSpec(
        name="glob_search",
        description=(
            "Find files and folders by glob pattern, newest first. Patterns match paths "
            "relative to base_dir (default: the working directory): '*' and '?' stay within one "
            "folder, '**' spans any number of folders, '[abc]' is a character class and "
            "'{py,pyi}' lists alternatives. Examples: '**/*.py' (every Python file), "
            "'src/**/test_*.py', '*.md' (top level only), 'docs/*'. Files ignored by .gitignore "
            "and the .git folder are skipped. Folders in the results end with '/'. Results are "
            "paths relative to the working directory (absolute when outside it), up to "
            "max_results (default 100)."),
        input_schema=GlobSearchParams.json_schema(),
        params=GlobSearchParams,
        category=ToolCategory.READ_ONLY,
        risk=RiskLevel.LOW,
        prompt_conventions=("glob_search finds files by name pattern (for example **/*.py).",),
        prompt_order=50,
        subjects_fn=_subjects,
        subject_kind="path",
        default_enabled=True,
        default_rules=reads_in_project("glob_search"),
        read_only=True,
        config_fields=(WALK_TIME_LIMIT_FIELD, USE_FD_FIELD),
    )

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            p = parse_glob_input(input)
        except ParamsError as err:
            return ToolResult.error(err.message_for("glob_search"))
        except FsError as exc:
            return ToolResult.error(f"glob_search: {exc}")
        pattern, base_dir, max_results = p.pattern, p.base_dir, p.max_results
        cfg = ctx.config_for("glob_search")
        timeout = float(cfg.get("timeout_s", ctx.shell_timeout_s))
        cancel = threading.Event()
        try:
            return await asyncio.to_thread(_glob, ScopedFs.from_context(ctx), pattern, base_dir,
                                           max_results, timeout, cancel)
        except FsError as exc:
            return ToolResult.error(f"glob_search: {exc}")
        finally:
            cancel.set()  # stops the walk if this call was cancelled


def _glob(fs: ScopedFs, pattern: str, base_dir: str | None, max_results: int,
          timeout: float, cancel: threading.Event) -> ToolResult:
    base_abs, rest = split_pattern(pattern, base_dir, fs.project_root)
    base = fs.resolve(base_abs)
    raw_base = fs.display(base)
    shown_base = visible_name(raw_base)
    if not base.exists() and (has_glob_magic(pattern) or base_dir is not None):
        return ToolResult.error(f"glob_search: the folder {shown_base} does not exist. "
                                "Check base_dir (or the folders at the start of pattern).")
    if not has_glob_magic(rest):
        # A plain path: report whether it exists, like a shell glob would.
        target = Path(os.path.realpath(os.path.join(base, rest)))
        if os.path.lexists(target):
            suffix = "/" if target.is_dir() else ""
            return ToolResult.ok(f"Found 1 path:\n{visible_name(fs.display(target))}{suffix}")
        return ToolResult.ok(f"No files match {pattern!r}: {visible_name(fs.display(target))} "
                             "does not exist.")
    if not base.is_dir():
        return ToolResult.error(f"glob_search: {shown_base} is not a folder; give a folder as "
                                "base_dir.")
    try:
        rx = compile_glob(rest)
    except Exception as exc:  # re.error from an odd character class
        return ToolResult.error(f"glob_search: invalid pattern {pattern!r}: {exc}.")
    max_depth = None if "**" in rest else rest.count("/") + 1
    deadline = time.monotonic() + timeout
    stats = WalkStats()
    found: list[tuple[float, str]] = []
    prefix = "" if raw_base == "." else raw_base.rstrip("/") + "/"
    visited = 0
    for item in walk_tree(str(base), max_depth=max_depth, stats=stats, cancel=cancel):
        visited += 1
        if visited % 1024 == 0 and (time.monotonic() > deadline or visited > MAX_VISITED):
            stats.stopped = f"stopped after {visited} entries ({timeout:g} s limit)"
            break
        if rx.fullmatch(item.rel) is None:
            continue
        try:
            mtime = item.entry.stat(follow_symlinks=True).st_mtime
        except OSError:  # dangling symlink
            try:
                mtime = item.entry.stat(follow_symlinks=False).st_mtime
            except OSError:
                continue
        shown = visible_name(prefix + item.rel) + ("/" if item.is_dir else "")
        found.append((mtime, shown))
    if stats.stopped == "cancelled":
        return ToolResult.error("glob_search was cancelled.")
    return ToolResult.ok(format_glob_results(found, rest, shown_base, max_results,
                                             stats.stopped, stats.errors))


def create() -> GlobSearchTool:
    return GlobSearchTool()
