"""grep_search's output, the same for both backends: one page of entries and its notes."""

from __future__ import annotations

from collections.abc import Iterable

from app.core.tools.fs.paths import visible_name
from app.core.tools.grep.results import FileHits, Outcome, Request

MAX_LINE_CHARS = 500


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
    secrets = outcome.secrets_not_searched
    if secrets or (req.file_pattern and req.is_secret(req.file_pattern.rsplit("/", 1)[-1])):
        example = f", e.g. {visible_name(secrets[0])[:200]}" if secrets else ""
        notes.append(f"[Files that hold secrets by their name (.env, keys, credentials…) are "
                     f"never searched{example}. To read one, name it in read_file or as this "
                     "search's path: the user is asked first.]")
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
