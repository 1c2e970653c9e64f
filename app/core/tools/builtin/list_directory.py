"""list_directory: a folder's contents as an indented tree, a few levels deep.

glob_search answers "which files match"; this answers "what is here", which is how a model
orients itself in an unknown project. It walks with the same .gitignore-aware walker as
glob_search and grep_search, so all three agree on what exists; ``.git`` is never listed and
symlinked folders are shown but not entered.

When there are more entries than the cap, the shallow levels are kept whole and the deepest
entries are dropped first: an overview of the top is worth more than one folder in full.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from typing import Any

from app.core.tools.arguments import path_subjects
from app.core.tools.base import (
    RiskLevel,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
    parse_input,
    reads_in_project,
)
from app.core.tools.config_fields import WALK_TIME_LIMIT_FIELD
from app.core.tools.fs.errors import FsError
from app.core.tools.fs.paths import check_path_text, visible_name
from app.core.tools.fs.scope import ScopedFs
from app.core.tools.fs.walker import WalkItem, WalkStats, walk_tree
from app.core.tools.params.declaration import Params, param
from app.core.visible_text import make_visible

DEFAULT_DEPTH = 2
MAX_DEPTH = 5
MAX_ENTRIES = 500
# A folder can hold millions of entries (an unignored build tree): stop walking long before.
MAX_VISITED = 200_000
_INDENT = "  "


class ListDirectoryParams(Params):
    path: str = param(default=".",
                      description="Folder to list, relative to the working directory or "
                                  "absolute (default: the working directory).")
    depth: int = param(default=DEFAULT_DEPTH, minimum=1, maximum=MAX_DEPTH,
                       description=f"How many levels to show: 1 is the folder's own entries "
                                   f"(default {DEFAULT_DEPTH}, at most {MAX_DEPTH}).")
    include_hidden: bool = param(default=False,
                                 description="Also list entries whose name starts with '.' "
                                             "(default false). .git is never listed.")


class ListDirectoryTool:
    spec = ToolSpec(
        name="list_directory",
        description=(
            "List what is in a folder as an indented tree: folders first (ending with '/'), "
            "then files, each group sorted by name; symlinks end with '@' and are not entered. "
            "depth sets how many levels are shown (default 2, at most 5). Files ignored by "
            ".gitignore, the .git folder and, unless include_hidden is true, names starting "
            f"with '.' are left out. At most {MAX_ENTRIES} entries are shown; when a folder "
            "holds more, the deepest entries are left out first and the output says how many. "
            "To find files by name pattern anywhere below a folder, use glob_search instead."),
        input_schema=ListDirectoryParams.json_schema(),
        params=ListDirectoryParams,
        category=ToolCategory.READ_ONLY,
        risk=RiskLevel.LOW,
        prompt_conventions=("Use list_directory to see a folder's contents rather than running "
                            "ls.",),
        prompt_order=40,
        subjects_fn=path_subjects("path", "."),
        subject_kind="path",
        default_enabled=True,
        default_rules=reads_in_project("list_directory"),
        read_only=True,
        config_fields=(WALK_TIME_LIMIT_FIELD,),
    )

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        p = parse_input(ListDirectoryParams, "list_directory", input)
        if isinstance(p, ToolResult):
            return p
        try:
            check_path_text(p.path)
        except FsError as exc:
            return ToolResult.error(f"list_directory: {make_visible(str(exc))}")
        timeout = float(ctx.config_for("list_directory").get("timeout_s", ctx.shell_timeout_s))
        cancel = threading.Event()
        try:
            return await asyncio.to_thread(_list, ScopedFs.from_context(ctx), p, timeout, cancel)
        except FsError as exc:
            return ToolResult.error(f"list_directory: {make_visible(str(exc))}")
        finally:
            cancel.set()  # stops the walk if this call was cancelled


def _list(fs: ScopedFs, p: ListDirectoryParams, timeout: float,
          cancel: threading.Event) -> ToolResult:
    root = fs.resolve(p.path)
    shown_root = visible_name(fs.display(root))
    if not root.exists():
        return ToolResult.error(f"list_directory: {shown_root} does not exist. Use "
                                "list_directory on its parent folder or glob_search to find it.")
    if not root.is_dir():
        return ToolResult.error(f"list_directory: {shown_root} is a file, not a folder; use "
                                "read_file to read it.")

    def hidden(rel: str, is_dir: bool) -> bool | None:
        # False excludes the entry and everything below it; None lets .gitignore decide.
        return False if rel.rsplit("/", 1)[-1].startswith(".") else None

    stats = WalkStats()
    items: list[WalkItem] = []
    deadline = time.monotonic() + timeout
    for item in walk_tree(str(root), max_depth=p.depth, stats=stats, cancel=cancel,
                          override=None if p.include_hidden else hidden):
        items.append(item)
        n = len(items)
        if n % 1024 == 0 and (time.monotonic() > deadline or n >= MAX_VISITED):
            stats.stopped = f"stopped after {n} entries ({timeout:g} s limit)"
            break
    if stats.stopped == "cancelled":
        return ToolResult.error("list_directory was cancelled.")
    return ToolResult.ok(_render(items, shown_root, p.depth, stats))


def _sort_key(item: WalkItem) -> tuple[bool, str, str]:
    name = item.rel.rsplit("/", 1)[-1]
    return (not item.is_dir, name.casefold(), name)


def _render(items: list[WalkItem], shown_root: str, depth: int, stats: WalkStats) -> str:
    # Shallow first (stable: the walker's order within a level does not matter, we sort below),
    # so the cap drops the deepest entries.
    by_depth = sorted(items, key=lambda it: it.rel.count("/"))
    kept = by_depth[:MAX_ENTRIES]
    children: dict[str, list[WalkItem]] = {}
    for item in kept:
        children.setdefault(item.rel.rpartition("/")[0], []).append(item)
    # Entries left out, per folder that is shown: the marker goes where they would have been.
    left_out: dict[str, int] = {}
    shown_dirs = {"", *(it.rel for it in kept if it.is_dir)}
    for item in by_depth[MAX_ENTRIES:]:
        parent = item.rel.rpartition("/")[0]
        if parent in shown_dirs:
            left_out[parent] = left_out.get(parent, 0) + 1

    lines: list[str] = []

    def emit(dir_rel: str, level: int) -> None:
        for item in sorted(children.get(dir_rel, ()), key=_sort_key):
            name = visible_name(item.rel.rsplit("/", 1)[-1])
            suffix = "/" if item.is_dir else "@" if item.is_symlink else ""
            lines.append(f"{_INDENT * level}{name}{suffix}")
            if item.is_dir:
                emit(item.rel, level + 1)
        if left_out.get(dir_rel):
            n = left_out[dir_rel]
            lines.append(f"{_INDENT * level}[… {n} more entr{'ies' if n != 1 else 'y'} here "
                         "not shown]")

    emit("", 0)
    total = len(items)
    where = "the working directory" if shown_root == "." else shown_root
    if not total:
        head = f"{where} is empty (or holds only ignored or hidden entries)."
    else:
        head = (f"{where}: {total} entr{'ies' if total != 1 else 'y'}, "
                f"{depth} level{'s' if depth != 1 else ''} deep:")
    notes: list[str] = []
    if total > len(kept):
        notes.append(f"[Showing {len(kept)} of {total} entries; the deepest were left out. "
                     "List a subfolder or use a smaller depth to see the rest.]")
    if stats.stopped:
        notes.append(f"[Listing incomplete: {stats.stopped}. List a subfolder instead.]")
    if stats.errors:
        notes.append(f"[{len(stats.errors)} folder(s) could not be read, e.g. "
                     f"{visible_name(stats.errors[0])}]")
    return "\n".join([head, *lines, *notes])


def create() -> ListDirectoryTool:
    return ListDirectoryTool()
