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
import contextlib
import io
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, cast

from app.core.tools.base import (
    DefaultRule,
    RiskLevel,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
    parse_input,
)
from app.core.tools.fs.paths import visible_name
from app.core.tools.params import Params, param
from app.core.tools.scoped_fs import (
    FsError,
    NotFoundError,
    ScopedFs,
    ToolInputError,
    WalkStats,
    check_path_text,
    gitignore_style_matcher,
    path_subjects,
    read_file_fast,
    walk_tree,
)

OUTPUT_MODES = ("content", "files_with_matches", "count")
DEFAULT_MODE: Final = "content"  # Final: typed as the Literal, for the params default
DEFAULT_HEAD_LIMIT = 200
MAX_HEAD_LIMIT = 5000
MAX_CONTEXT = 20
MAX_LINE_CHARS = 500
MAX_COLLECTED_LINES = 200_000  # beyond this a search stops and says its totals are partial
MAX_RG_OUTPUT_BYTES = 64 * 1024 * 1024
MAX_PY_FILE_BYTES = 256 * 1024 * 1024
BINARY_SNIFF = 64 * 1024


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


class GrepError(Exception):
    """A search that cannot run; the message tells the model how to fix the call."""


@dataclass
class FileHits:
    path: str  # as shown to the model
    count: int = 0  # matching lines
    lines: list[tuple[int, bool, str]] = field(default_factory=list)  # (line no, is match, text)
    # rg's output block for this file, parsed only if a page shows it (results can be huge).
    raw: bytes | None = field(default=None, repr=False, compare=False)
    raw_lines: int = field(default=0, repr=False, compare=False)

    def output_lines(self) -> list[tuple[int, bool, str]]:
        if self.raw is not None:
            self.lines = _parse_block(self.raw)
            self.raw = None
        return self.lines

    def output_count(self) -> int:
        return self.raw_lines if self.raw is not None else len(self.lines)


@dataclass
class Outcome:
    files: list[FileHits]
    backend: str
    errors: list[str] = field(default_factory=list)
    incomplete: str | None = None
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Request:
    pattern: str
    root: Path  # resolved search path
    root_is_file: bool
    root_arg: str  # how the root is shown (and passed to rg with cwd = working dir)
    file_pattern: str | None
    context: int
    ignore_case: bool
    mode: str
    cwd: Path
    timeout: float


# -- regex helpers ---------------------------------------------------------------------------

def compile_pattern(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.MULTILINE | (re.IGNORECASE if ignore_case else 0))
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        if "\\p" in exc.msg or "\\P" in exc.msg:
            where += " (Unicode classes like \\p{L} need ripgrep, which is not in use)"
        raise GrepError(
            f"Invalid regular expression {pattern!r}: {exc.msg}{where}. Escape characters "
            "that have a special meaning ( . * + ? ( ) [ ] { } | \\ ^ $ ) with a backslash to "
            "search for them literally, e.g. 'foo\\(' for 'foo('.") from None


def required_literal(pattern: str, ignore_case: bool) -> tuple[bytes, bool] | None:
    """A substring every match must contain, to skip files without running the regex (as rg
    does), and whether it must be compared case-insensitively.

    Taken from the top level of the parsed pattern only (never from inside alternatives,
    optional groups, repeats or groups with their own flags), so it is always safe; None when
    there is none worth using. Case-insensitive literals are ASCII only (see ``_matcher``).
    """
    try:
        from re import _parser as sre_parse  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - Python < 3.11
        import sre_parse  # type: ignore[no-redef]
    try:
        parsed = sre_parse.parse(pattern, re.MULTILINE)
    except Exception:
        return None
    fold = ignore_case or bool(parsed.state.flags & re.IGNORECASE)
    literal_op = sre_parse.LITERAL
    subpattern_op = sre_parse.SUBPATTERN
    best, run = "", []

    def visit(items: Iterable[tuple[Any, Any]]) -> None:
        nonlocal best, run
        for op, av in items:
            if op is literal_op:
                run.append(chr(av))
                continue
            if op is subpattern_op and not (av[1] or 0) and not (av[2] or 0):
                visit(av[3])  # a plain group: its literals continue the run
                continue
            if len("".join(run)) > len(best):
                best = "".join(run)
            run = []

    visit(parsed)
    if len("".join(run)) > len(best):
        best = "".join(run)
    if len(best) < 2 or "\n" in best or "\ufffd" in best:
        return None
    if fold:
        if not best.isascii():
            return None
        return best.lower().encode("ascii"), True
    return best.encode("utf-8"), False


def search_text(text: str, rx: re.Pattern[str], mode: str, context: int) -> FileHits | None:
    """Line-by-line semantics (like grep) with one regex pass over the whole text.

    A match found by the whole-text search is kept if it lies within one line; a match that
    spans a newline only proves something when its first line matches on its own.
    """
    n = len(text)
    hits: list[tuple[int, int, int]] = []  # (line number, start, end)
    pos, lineno, last = 0, 1, 0
    search = rx.search
    while pos <= n:
        m = search(text, pos)
        if m is None:
            break
        s = m.start()
        ls = text.rfind("\n", 0, s) + 1
        if ls >= n:
            break  # an empty match after the final newline is not a line
        le = text.find("\n", ls)
        if le < 0:
            le = n
        if m.end() <= le or search(text, ls, le) is not None:
            lineno += text.count("\n", last, ls)
            last = ls
            hits.append((lineno, ls, le))
            if mode == "files_with_matches":
                break
        pos = le + 1
    if not hits:
        return None
    result = FileHits("", len(hits))
    if mode != "content":
        return result
    out = result.lines
    emitted = 0
    for i, (ln, ls, le) in enumerate(hits):
        before: list[tuple[int, bool, str]] = []
        p, k = ls, ln
        while k - 1 > emitted and len(before) < context:
            pe = p - 1
            ps = text.rfind("\n", 0, pe) + 1
            k -= 1
            before.append((k, False, text[ps:pe]))
            p = ps
        out.extend(reversed(before))
        out.append((ln, True, text[ls:le]))
        emitted = ln
        next_ln = hits[i + 1][0] if i + 1 < len(hits) else None
        p, k = le, ln
        while k < ln + context and (next_ln is None or k + 1 < next_ln):
            ps = p + 1
            if ps >= n:
                break
            pe = text.find("\n", ps)
            if pe < 0:
                pe = n
            k += 1
            out.append((k, False, text[ps:pe]))
            emitted = k
            p = pe
    return result


# -- the Python backend ----------------------------------------------------------------------

def _matcher(req: Request, rx: re.Pattern[str],
             literal: tuple[bytes, bool] | None) -> Callable[[str], FileHits | None]:
    mode, context = req.mode, req.context
    needle, fold = literal if literal is not None else (b"", False)

    def search_file(path: str) -> FileHits | None:
        data = read_file_fast(path, MAX_PY_FILE_BYTES)
        if not data:
            return None
        if needle:
            if not fold:
                if needle not in data:
                    return None
            # Unicode case folding maps a few non-ASCII letters onto ASCII ones (K, ſ, İ...),
            # so the lowered-bytes shortcut is exact only for pure-ASCII files.
            elif data.isascii() and needle not in data.lower():
                return None
        if b"\x00" in data:
            return None  # binary
        return search_text(data.decode("utf-8", "replace"), rx, mode, context)

    return search_file


def run_python(req: Request, cancel: threading.Event | None = None,
               threads: int | None = None) -> Outcome:
    """Search with Python only; blocking (call it in a thread)."""
    rx = compile_pattern(req.pattern, req.ignore_case)
    literal = required_literal(req.pattern, req.ignore_case)
    search_file = _matcher(req, rx, literal)
    outcome = Outcome([], "python")
    deadline = time.monotonic() + req.timeout
    if req.root_is_file:
        hits = search_file(str(req.root))
        if hits is not None:
            hits.path = visible_name(req.root_arg)
            outcome.files.append(hits)
        return outcome
    prefix = "" if req.root_arg == "." else req.root_arg.rstrip("/") + "/"
    override = None
    if req.file_pattern:
        glob = gitignore_style_matcher(req.file_pattern)

        def override(rel: str, is_dir: bool) -> bool | None:
            if glob(rel, is_dir):
                return True
            return None if is_dir else False

    stats = WalkStats()
    walk = walk_tree(str(req.root), override=override, stats=stats, cancel=cancel)
    paths = ((item.path, item.rel) for item in walk
             if not item.is_dir and not item.is_symlink and item.entry.is_file(
                 follow_symlinks=False))
    collected = 0
    workers = threads if threads is not None else min(4, (os.cpu_count() or 1) + 1)

    def consume(results: Iterable[tuple[str, FileHits | None]]) -> None:
        nonlocal collected
        for i, (rel, hits) in enumerate(results):
            if hits is not None:
                hits.path = visible_name(prefix + rel)
                outcome.files.append(hits)
                collected += max(hits.count, len(hits.lines))
                if collected > MAX_COLLECTED_LINES:
                    outcome.incomplete = (f"stopped after {MAX_COLLECTED_LINES} matching lines")
                    return
            if i % 256 == 0 and time.monotonic() > deadline:
                outcome.incomplete = f"stopped at the {req.timeout:g} s time limit"
                return
            if cancel is not None and cancel.is_set():
                outcome.incomplete = "cancelled"
                return

    if workers <= 1:
        consume((rel, search_file(p)) for p, rel in paths)
    else:
        with ThreadPoolExecutor(workers, thread_name_prefix="grep") as pool:
            consume(_ordered_map(pool, search_file, paths, workers * 16))
    outcome.errors.extend(stats.errors)
    outcome.files.sort(key=lambda h: h.path)
    return outcome


def _ordered_map(pool: ThreadPoolExecutor, fn: Callable[[str], FileHits | None],
                 items: Iterable[tuple[str, str]], window: int
                 ) -> Iterable[tuple[str, FileHits | None]]:
    """pool.map with a bounded queue, so the walk and the searches overlap without buffering."""
    pending: list[tuple[str, Any]] = []
    for path, rel in items:
        pending.append((rel, pool.submit(fn, path)))
        if len(pending) >= window:
            batch, pending = pending[: window // 2], pending[window // 2:]
            for r, fut in batch:
                yield r, fut.result()
    for r, fut in pending:
        yield r, fut.result()


# -- the ripgrep backend ---------------------------------------------------------------------

def find_rg(cfg: Mapping[str, Any]) -> str | None:
    choice = cfg.get("use_rg", "auto")
    if choice is False or choice == "never":
        return None
    explicit = cfg.get("rg_path")
    if explicit:
        return str(explicit) if os.access(str(explicit), os.X_OK) else None
    return shutil.which("rg")


def rg_argv(rg: str, req: Request) -> list[str]:
    heading = "--heading" if req.mode == "content" else "--no-heading"
    argv = [rg, "--no-config", "--color=never", heading, "--with-filename",
            "--line-number", "--null", "--hidden", "--no-require-git", "--no-ignore-global",
            "--no-ignore-exclude", "--encoding=none",
            "--ignore-case" if req.ignore_case else "--case-sensitive"]
    if req.mode == "files_with_matches":
        argv.append("--files-with-matches")
    elif req.mode == "count":
        argv.append("--count")
    elif req.context:
        argv.append(f"--context={req.context}")
    if req.file_pattern:
        argv.append(f"--glob={req.file_pattern}")
    argv += ["--glob=!.git", "--regexp", req.pattern, "--", req.root_arg]
    return argv


@dataclass
class _Proc:
    popen: subprocess.Popen[bytes] | None = None


def _run_rg_blocking(argv: list[str], cwd: Path, timeout: float,
                     holder: _Proc) -> tuple[bytes, bytes, int | None, str | None]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIPGREP_")}
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=err, env=env)
        holder.popen = proc
        stopped: list[str] = []

        def on_timeout() -> None:
            stopped.append(f"stopped at the {timeout:g} s time limit")
            with contextlib.suppress(OSError):
                proc.kill()

        timer = threading.Timer(timeout, on_timeout)
        timer.daemon = True
        timer.start()
        chunks, total = [], 0
        try:
            assert proc.stdout is not None
            while True:
                chunk = cast(io.BufferedReader, proc.stdout).read1(1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
                if total > MAX_RG_OUTPUT_BYTES:
                    stopped.append(f"stopped after {MAX_RG_OUTPUT_BYTES // (1 << 20)} MB of "
                                   "results")
                    proc.kill()
                    break
        finally:
            timer.cancel()
            proc.stdout.close()  # type: ignore[union-attr]
            code = proc.wait()
        err.seek(0)
        return b"".join(chunks), err.read(64 * 1024), code, (stopped[0] if stopped else None)


def _strip_dot(path: bytes) -> str:
    if path.startswith(b"./"):
        path = path[2:]
    return visible_name(os.fsdecode(path))


_RG_LINE = re.compile(rb"(\d+)([:-])")
_RG_MATCH_LINE = re.compile(rb"(?:^|\n)\d+:")
_RG_COUNT = re.compile(rb"([^\0]+)\0(\d+)(?:\n|$)")


def _parse_block(body: bytes) -> list[tuple[int, bool, str]]:
    out = []
    for line in body.split(b"\n"):
        m = _RG_LINE.match(line)
        if m is not None:  # skips "--" group separators
            out.append((int(m[1]), m[2] == b":", line[m.end():].decode("utf-8", "replace")))
    return out


def parse_rg(out: bytes, mode: str, context: int = 0) -> list[FileHits]:
    """Parse rg's ``--null`` output. Content mode uses ``--heading`` blocks (one per file,
    separated by a blank line) so that only counting happens per file here; the lines of a
    block are parsed when a page shows them."""
    files: dict[str, FileHits] = {}
    if mode == "files_with_matches":
        for raw in out.split(b"\0"):
            raw = raw.strip(b"\n")
            if raw:
                p = _strip_dot(raw)
                files[p] = FileHits(p, 1)
        return list(files.values())
    if mode == "count":
        # "path\0count\n" per file; a name may itself hold a newline, so match the records
        # rather than split lines (a name cannot hold NUL).
        for m in _RG_COUNT.finditer(out):
            p = _strip_dot(m[1])
            files[p] = FileHits(p, int(m[2]))
        return list(files.values())
    for block in out.split(b"\n\n"):
        raw, sep, body = block.partition(b"\0")
        if not sep:
            continue
        n_out = body.count(b"\n") + (0 if body.endswith(b"\n") else 1)
        if context:  # "--" separators are not output lines; context lines are not matches
            n_out -= body.count(b"\n--\n")
            count = len(_RG_MATCH_LINE.findall(body))
        else:
            count = n_out
        p = _strip_dot(raw.lstrip(b"\n"))
        files[p] = FileHits(p, count, raw=body, raw_lines=n_out)
    return list(files.values())


async def run_rg(rg: str, req: Request) -> Outcome | None:
    """Search with ripgrep; None when rg cannot parse a pattern Python can (use Python)."""
    holder = _Proc()
    try:
        out, err, code, stopped = await asyncio.to_thread(
            _run_rg_blocking, rg_argv(rg, req), req.cwd, req.timeout, holder)
    except asyncio.CancelledError:
        if holder.popen is not None:
            with contextlib.suppress(OSError):
                holder.popen.kill()
        raise
    errors = err.decode("utf-8", "replace")
    if code == 2 and not out and stopped is None:
        if "regex parse error" in errors or "error parsing regex" in errors:
            compile_pattern(req.pattern, req.ignore_case)  # raises GrepError if Python fails too
            return None
        if "(os error" not in errors:
            raise GrepError(f"ripgrep failed: {errors.strip()[:2000]}")
    outcome = Outcome(parse_rg(out, req.mode, req.context), "rg", incomplete=stopped)
    if code == 2 and errors.strip():
        outcome.errors = [ln for ln in errors.splitlines() if ln.strip()]
    outcome.files.sort(key=lambda h: h.path)
    return outcome


# -- formatting (shared by both backends) ----------------------------------------------------

def _cut(text: str) -> str:
    text = text.removesuffix("\r")
    if len(text) > MAX_LINE_CHARS:
        return text[:MAX_LINE_CHARS] + f" … [line truncated: {len(text)} characters]"
    return text


def _content_entries(files: list[FileHits], context: int,
                     start: int) -> Iterable[tuple[bool, str]]:
    """Content-mode output lines from index ``start`` on, formatted lazily (results can be
    huge; only a page is shown). Yields (a '--' group break precedes it, line)."""
    idx = 0
    for f in files:
        n = f.output_count()
        if idx + n <= start:
            idx += n
            continue
        prev = None
        for ln, is_match, text in f.output_lines():
            brk = bool(context) and idx > 0 and (prev is None or ln != prev + 1)
            prev = ln
            if idx >= start:
                sep = ":" if is_match else "-"
                yield brk, f"{f.path}{sep}{ln}{sep}{_cut(text)}"
            idx += 1


def format_outcome(req: Request, outcome: Outcome, head_limit: int, offset: int,
                   max_chars: int) -> str:
    files = outcome.files
    n_files = len(files)
    n_lines = sum(f.count for f in files)
    where = (f"in {visible_name(req.root_arg)}" if req.root_arg != "."
             else "in the working directory")
    what = f"/{req.pattern}/" + ("i" if req.ignore_case else "")
    notes: list[str] = []
    if outcome.incomplete:
        notes.append(f"[Search incomplete ({outcome.incomplete}); the totals above are lower "
                     "bounds. Narrow path, file_pattern or the pattern.]")
    if outcome.errors:
        notes.append(f"[{len(outcome.errors)} path(s) could not be searched, e.g. "
                     f"{visible_name(outcome.errors[0])[:300]}]")
    if not files:
        msg = (f"No matches for {what} {where}. (Files ignored by .gitignore, binary files and "
               "the .git folder are not searched.)")
        return "\n".join([msg, *notes])

    entries: list[str] | None = None
    if req.mode == "files_with_matches":
        unit = "files"
        head = f"Found {n_files} file{'s' if n_files != 1 else ''} matching {what} {where}:"
        entries = [f.path for f in files]
    elif req.mode == "count":
        unit = "files"
        head = (f"Found {n_lines} matching line{'s' if n_lines != 1 else ''} in {n_files} "
                f"file{'s' if n_files != 1 else ''} for {what} {where}:")
        entries = [f"{f.path}:{f.count}" for f in files]
    else:
        unit = "lines"
        head = (f"Found {n_lines} matching line{'s' if n_lines != 1 else ''} in {n_files} "
                f"file{'s' if n_files != 1 else ''} for {what} {where}:")
    total = len(entries) if entries is not None else sum(f.output_count() for f in files)
    if offset >= total:
        return "\n".join([head, f"[offset {offset} is past the end: there are {total} "
                                f"{unit} of output. Use an offset below {total}.]", *notes])
    page = (((False, e) for e in entries[offset:]) if entries is not None
            else _content_entries(files, req.context, offset))
    out = [head]
    used = len(head)
    end = min(total, offset + head_limit)
    i = offset
    for brk, line in page:
        if i >= end or (used + len(line) + 1 > max_chars and i > offset):
            break
        if brk and i != offset:
            out.append("--")
        out.append(line)
        used += len(line) + 1
        i += 1
    if i < total:
        reason = "the output size limit" if i < end else f"head_limit={head_limit}"
        out.append(f"[Showing {unit} {offset + 1}–{i} of {total} ({reason}). Call again with "
                   f"offset={i} for more, or narrow path, file_pattern or the pattern.]")
    return "\n".join(out + notes)


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
        subjects_fn=path_subjects("path", "."),
        subject_kind="path",
        default_enabled=True,
        default_rules=(DefaultRule("allow", description="grep_search is read-only"),),
        # It runs ripgrep (rg) when installed; the Python backend is only the fallback.
        runs_programs=True,
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
            outcome = await search(req, cfg)
        except GrepError as exc:
            return ToolResult.error(f"grep_search: {exc}")
        except FsError as exc:
            return ToolResult.error(f"grep_search: {exc}")
        max_chars = int(cfg.get("max_output_chars", max(ctx.max_output_bytes, 20_000)))
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
                   fs.working_dir, timeout)


async def search(req: Request, cfg: Mapping[str, Any]) -> Outcome:
    """Run the search on rg when available (and allowed), else in Python."""
    rg = find_rg(cfg)
    if rg is not None:
        try:
            outcome = await run_rg(rg, req)
        except OSError:  # rg vanished or is not executable: the Python backend still works
            outcome = None
        if outcome is not None:
            return outcome
    elif cfg.get("use_rg") is True:
        raise GrepError("ripgrep (rg) is required by this tool's configuration but was not "
                        "found. Install ripgrep or set use_rg to 'auto'.")
    cancel = threading.Event()
    try:
        return await asyncio.to_thread(run_python, req, cancel, cfg.get("threads"))
    finally:
        cancel.set()


def create() -> GrepSearchTool:
    return GrepSearchTool()
