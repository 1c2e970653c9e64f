"""grep_search: regex search over file contents.

Two backends give the same results in the same format:

- ``rg`` (ripgrep) when it is installed. It is run as an argv list
  with ``--no-config`` (so no RIPGREP_CONFIG_PATH can inject ``--pre``), the pattern after
  ``--regexp`` (a leading ``-`` stays a pattern) and ``--`` before the path.
- a Python implementation otherwise, tuned to stay within ~10× of rg: whole files read as
  bytes, a required-literal pre-filter on the raw bytes, binary files skipped by a NUL check,
  and one regex search over the whole file before any line is split.

Both search the same files: .gitignore (and rg's .ignore/.rgignore) honoured, also outside git
repos and in parent folders up to the repository root; hidden files included; the .git folder,
symlinks and binary files (a NUL byte) skipped; ``file_pattern`` applied like rg's ``--glob``.
Results are sorted by path, so output is deterministic and pagination with ``offset`` is stable.

Known differences: rg's regex dialect is Rust's, Python's is ``re``. A pattern only Python
understands (look-around, backreferences) falls back to the Python backend; one only Rust
understands (``\\p{Greek}``) works only with rg. In files that are not valid UTF-8, rg's ``.``
or ``[^x]`` never match an invalid byte while Python's match the U+FFFD it was decoded to. rg
skips a file as binary when a NUL byte shows up in what it has read so far, so it may report
matches that precede a late NUL, where the Python backend skips such files entirely.
"""

from __future__ import annotations

import asyncio
import dataclasses
import stat
import threading
from collections.abc import Mapping
from typing import Any, Final, Literal

from app.core.sandbox import Confinement, SandboxRequired
from app.core.tools.arguments import ToolInputError, path_subjects
from app.core.tools.base import (
    RiskLevel,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
    parse_input,
    reads_in_project,
)
from app.core.tools.config_fields import WALK_TIME_LIMIT_FIELD, ConfigField, FieldKind
from app.core.tools.fs.errors import FsError, NotFoundError
from app.core.tools.fs.paths import check_path_text, visible_name
from app.core.tools.fs.scope import ScopedFs
from app.core.tools.grep.formatting import format_outcome
from app.core.tools.grep.python_backend import run_python
from app.core.tools.grep.results import GrepError, Outcome, Request
from app.core.tools.grep.rg_backend import find_rg, run_rg
from app.core.tools.params.declaration import Params, param

# The search itself lives in app.core.tools.grep (backends, results, formatting).

OUTPUT_MODES = ("content", "files_with_matches", "count")
DEFAULT_MODE: Final = "content"  # Final: typed as the Literal, for the params default
DEFAULT_HEAD_LIMIT = 200
MAX_HEAD_LIMIT = 5000
MAX_CONTEXT = 20
BINARY_SNIFF = 64 * 1024

MAX_OUTPUT_CHARS_FIELD = ConfigField(
    "max_output_chars", "Output limit", FieldKind.INTEGER, default=50_000,
    minimum=100, maximum=1_000_000, unit="characters",
    help="One call returns at most this much text; the model pages on with offset.")
USE_RG_FIELD = ConfigField(
    "use_rg", "Search program", FieldKind.CHOICE, default="auto",
    choices=(("auto", "Use ripgrep (rg) when it is installed (faster)"),
             ("never", "Always search in Python")))


class GrepSearchParams(Params):
    pattern: str = param(min_length=1, description="Regular expression to search for.")
    path: str = param(default=".", description="File or folder to search (default: working "
                                               "directory).")
    file_pattern: str | None = param(default=None,
                                     description="Only search files matching this glob, e.g. "
                                                 "'*.py' or 'src/**/*.ts'.")
    context_lines: int = param(default=0, minimum=0, maximum=MAX_CONTEXT,
                               description="Lines of context before and after each match "
                                           "(content mode; default 0).")
    case_insensitive: bool = param(default=False, description="Ignore case (default false).")
    # The order of OUTPUT_MODES, which the schema's enum has always listed.
    output_mode: Literal["content", "files_with_matches", "count"] = param(
        default=DEFAULT_MODE,
        description="'content' (default), 'files_with_matches' or 'count'.")
    head_limit: int = param(default=DEFAULT_HEAD_LIMIT, minimum=1, maximum=MAX_HEAD_LIMIT,
                            description="Most output entries (lines, or files) to return "
                                        f"(default {DEFAULT_HEAD_LIMIT}).")
    offset: int = param(default=0, minimum=0,
                        description="Skip this many entries first, to page through results "
                                    "(default 0).")


# -- the tool --------------------------------------------------------------------------------

class GrepSearchTool:
    spec = ToolSpec(
        name="grep_search",
        description=(
            "Search file contents with a regular expression (Rust/Python regex syntax, matched "
            "line by line). path is a folder (searched recursively) or a file; default: the "
            "working directory. file_pattern limits the files by glob: '*.py' (any depth), "
            "'*.{ts,tsx}', 'src/**/*.rs'. output_mode: 'content' (default; matching lines as "
            "path:line:text, context lines as path-line-text, '--' between groups), "
            "'files_with_matches' (paths only) or 'count' (path:matching lines). Results are "
            "sorted by path; head_limit (default 200) and offset page through long results. "
            "Files ignored by .gitignore, binary files and the .git folder are skipped. Escape "
            "regex characters to search literally, e.g. 'foo\\(' or '\\.get\\('."),
        input_schema=GrepSearchParams.json_schema(),
        params=GrepSearchParams,
        category=ToolCategory.READ_ONLY,
        risk=RiskLevel.LOW,
        prompt_conventions=("grep_search searches file contents; prefer it to running grep.",),
        prompt_order=60,
        subjects_fn=path_subjects("path", "."),
        subject_kind="path",
        default_enabled=True,
        default_rules=reads_in_project("grep_search"),
        read_only=True,
        # It runs ripgrep (rg) when installed; the Python backend is only the fallback.
        runs_programs=True,
        sandboxed=True,
        config_fields=(WALK_TIME_LIMIT_FIELD, MAX_OUTPUT_CHARS_FIELD, USE_RG_FIELD),
    )

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        p = parse_input(GrepSearchParams, "grep_search", input)
        if isinstance(p, ToolResult):
            return p
        pattern, mode, ignore_case = p.pattern, p.output_mode, p.case_insensitive
        context, head_limit, offset = p.context_lines, p.head_limit, p.offset
        path = p.path or "."  # an empty path has always meant the working directory
        file_pattern = p.file_pattern or None
        try:
            # What the schema cannot express: single-line patterns, usable path text.
            if "\n" in pattern or "\r" in pattern:
                raise ToolInputError("pattern contains a line break; grep_search matches "
                                     "within single lines. Search for one line at a time.")
            check_path_text(path)
            if file_pattern is not None and "\x00" in file_pattern:
                raise ToolInputError("file_pattern contains a NUL character.")
        except (ToolInputError, FsError) as exc:
            return ToolResult.error(f"grep_search: {exc}")
        fs = ScopedFs.from_context(ctx)
        cfg = ctx.config_for("grep_search")
        try:
            req = await asyncio.to_thread(
                _request, fs, pattern, path, file_pattern, context, ignore_case, mode,
                float(cfg.get("timeout_s", ctx.shell_timeout_s)))
            req = dataclasses.replace(req, secret_names=ctx.sandbox.secret_names)
            outcome = await search(req, cfg, _rg_confinement(ctx, req))
        except GrepError as exc:
            return ToolResult.error(f"grep_search: {exc}")
        except FsError as exc:
            return ToolResult.error(f"grep_search: {exc}")
        max_chars = MAX_OUTPUT_CHARS_FIELD.value_of(cfg.get(MAX_OUTPUT_CHARS_FIELD.key))
        return ToolResult.ok(format_outcome(req, outcome, head_limit, offset, max_chars))


def _request(fs: ScopedFs, pattern: str, path: str, file_pattern: str | None, context: int,
             ignore_case: bool, mode: str, timeout: float) -> Request:
    root = fs.resolve(path)
    shown = fs.display(root)  # passed to rg as is
    named = visible_name(shown)  # as messages print it
    try:
        is_file = not stat.S_ISDIR(fs.stat(root).st_mode)
    except NotFoundError:
        raise GrepError(f"{named} does not exist. Give an existing file or folder as path "
                        "(relative to the working directory), or leave path out.") from None
    if is_file:
        f, _ = fs.open_file(root)  # refuses FIFOs and devices with a clear FsError
        with f:
            try:
                head = f.read(BINARY_SNIFF)
            except OSError as exc:
                raise GrepError(f"cannot read {named}: {exc.strerror or exc}") from None
        if b"\x00" in head:
            raise GrepError(f"{named} is a binary file; grep_search searches text files only.")
    return Request(pattern, root, is_file, shown, file_pattern, context, ignore_case, mode,
                   fs.project_root, timeout)


_IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")
_NO_PROGRAMS = "no programs"  # the sandbox is required and missing: search in Python


def _rg_confinement(ctx: ToolContext, req: Request) -> Confinement | str | None:
    """ripgrep's sandbox: it writes nowhere and needs no network, and the hidden folders
    (~/.ssh, ...) stay hidden from it, so a search of the home folder cannot read them."""
    # rg also reads the ignore files of the folders above the search (it runs with
    # --no-require-git); they must be in sight where those folders are not (the private /tmp).
    above = [folder / name for folder in req.root.parents for name in _IGNORE_FILES
             if (folder / name).is_file()]
    try:
        return ctx.confine(read_only=(req.root, *above))
    except SandboxRequired:
        return _NO_PROGRAMS


async def search(req: Request, cfg: Mapping[str, Any],
                 confinement: Confinement | str | None = None) -> Outcome:
    """Run the search on rg when available (and allowed), else in Python."""
    rg = find_rg(cfg) if confinement != _NO_PROGRAMS else None
    if rg is not None:
        try:
            outcome = await run_rg(rg, req, confinement if isinstance(confinement, Confinement)
                                   else None)
        except OSError:  # rg vanished or is not executable: the Python backend still works
            outcome = None
        if outcome is not None:
            return outcome
    elif cfg.get("use_rg") is True and confinement != _NO_PROGRAMS:
        raise GrepError("ripgrep (rg) is required by this tool's configuration but was not "
                        "found. Install ripgrep or set use_rg to 'auto'.")
    cancel = threading.Event()
    try:
        return await asyncio.to_thread(run_python, req, cancel, cfg.get("threads"))
    finally:
        cancel.set()


def create() -> GrepSearchTool:
    return GrepSearchTool()
