"""grep_search's Python backend, tuned to stay within ~10x of ripgrep.

Whole files are read as bytes, a required-literal pre-filter runs on the raw bytes, binary
files are skipped by a NUL check, and one regex search runs over the whole file before any line
is split. Blocking: run it in a thread.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from app.core.globs import gitignore_style_matcher
from app.core.tools.fs.paths import visible_name
from app.core.tools.fs.scope import read_file_fast
from app.core.tools.fs.walker import WalkStats, walk_tree
from app.core.tools.grep.results import FileHits, Outcome, Request, compile_pattern

MAX_COLLECTED_LINES = 200_000  # beyond this a search stops and says its totals are partial
MAX_PY_FILE_BYTES = 256 * 1024 * 1024


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
        import sre_parse
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
    secrets = outcome.secrets_not_searched

    def searchable(name: str, rel: str) -> bool:
        if req.is_secret(name):  # its content is read only by a call that names it
            secrets.append(prefix + rel)
            return False
        return True

    paths = ((item.path, item.rel) for item in walk
             if not item.is_dir and not item.is_symlink and item.entry.is_file(
                 follow_symlinks=False) and searchable(item.entry.name, item.rel))
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
