"""read_file: a window of a text file as numbered lines.

The output is for a model: ``cat -n`` numbering so it can cite and edit lines, explicit markers
wherever something was left out, and refusals (binary, huge) that say what to do instead.
"""

from __future__ import annotations

import asyncio
import codecs
import difflib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

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
from app.core.tools.config_fields import ConfigField, FieldKind
from app.core.tools.fs.errors import FsError, IsADirectoryFsError, NotFoundError
from app.core.tools.fs.paths import check_path_text, visible_name
from app.core.tools.fs.scope import ScopedFs
from app.core.tools.params.declaration import Params, param
from app.core.visible_text import make_visible

DEFAULT_LIMIT = 2000
MAX_LIMIT = 100_000
MAX_LINE_CHARS = 2000
MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_OUTPUT_CHARS = 100_000
SNIFF_BYTES = 8192

MAX_FILE_BYTES_FIELD = ConfigField(
    "max_file_bytes", "Whole-file limit", FieldKind.BYTES, default=MAX_FILE_BYTES,
    help="A larger file is not read from its start in one call: the model is told to read a "
         "part (offset and limit) or to search it with grep_search.")
MAX_OUTPUT_CHARS_FIELD = ConfigField(
    "max_output_chars", "Output limit", FieldKind.INTEGER, default=MAX_OUTPUT_CHARS,
    minimum=100, maximum=1_000_000, unit="characters",
    help="One call returns at most this much text; the last line says where to continue.")


class ReadFileParams(Params):
    path: str = param(description="File to read, relative to the working directory or "
                                  "absolute (~ is expanded).")
    offset: int = param(default=1, minimum=0,
                        description="1-based line number to start reading at (default 1).")
    limit: int = param(default=DEFAULT_LIMIT, minimum=1, maximum=MAX_LIMIT,
                       description=f"Maximum number of lines to return (default "
                                   f"{DEFAULT_LIMIT}).")

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (or docx/xlsx/jar)"),
    (b"\x7fELF", "an ELF executable"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"SQLite format 3", "an SQLite database"),
    (b"MZ", "a Windows executable"),
)


def _human(n: int) -> str:
    size = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"  # pragma: no cover


def binary_kind(head: bytes) -> str | None:
    """What a file is, if it is binary: text files have no NUL in their first 8 KB (as git)."""
    if _is_utf16(head):
        return None
    if b"\x00" not in head[:SNIFF_BYTES]:
        return None
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    return "binary data"


class ReadFileTool:
    spec = ToolSpec(
        name="read_file",
        description=(
            "Read a text file. Returns its lines numbered like `cat -n` (right-aligned line "
            "number, a tab, then the line). By default reads up to 2000 lines from the start; "
            "use offset (1-based line number to start at) and limit (number of lines) to read "
            "another part — when output is cut, the last line says which offset to use next. "
            "Lines longer than 2000 characters are cut with a marker. Binary files are refused; "
            "files over 10 MB must be read in parts with offset/limit (or searched with "
            "grep_search). Paths are relative to the working directory or absolute. The line "
            "numbers are not part of the file: leave them out of edit_file's old_string."),
        input_schema=ReadFileParams.json_schema(),
        params=ReadFileParams,
        category=ToolCategory.READ_ONLY,
        risk=RiskLevel.LOW,
        prompt_conventions=("Read a file with read_file before editing it, and read only the "
                            "part you need of a large file.",),
        prompt_order=10,
        subjects_fn=path_subjects("path"),
        subject_kind="path",
        default_enabled=True,
        default_rules=reads_in_project("read_file"),
        read_only=True,
        config_fields=(MAX_FILE_BYTES_FIELD, MAX_OUTPUT_CHARS_FIELD),
    )

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        p = parse_input(ReadFileParams, "read_file", input)
        if isinstance(p, ToolResult):
            return p
        try:
            check_path_text(p.path)
        except FsError as exc:
            return ToolResult.error(f"read_file: {make_visible(str(exc))}")
        path, limit = p.path, p.limit
        offset = p.offset or 1  # 0 has always meant "from the start", like 1
        windowed = "offset" in input or "limit" in input
        cfg = ctx.config_for("read_file")
        return await asyncio.to_thread(
            _read, ScopedFs.from_context(ctx), path, offset, limit, windowed,
            MAX_FILE_BYTES_FIELD.value_of(cfg.get(MAX_FILE_BYTES_FIELD.key)),
            MAX_OUTPUT_CHARS_FIELD.value_of(cfg.get(MAX_OUTPUT_CHARS_FIELD.key)))


def _not_found(fs: ScopedFs, path: str, target: Path) -> str:
    # Names as they exist, escaped: a newline or bidi override in a name must show as such.
    shown = visible_name(fs.display(target))
    msg = f"File not found: {shown}."
    parent = target.parent
    if parent.is_dir():
        names = fs.list_names(parent)
        close = difflib.get_close_matches(target.name, names, n=3, cutoff=0.6)
        if close:
            msg += " Did you mean: " + ", ".join(visible_name(fs.display(parent / c))
                                                 for c in close) + "?"
    else:
        msg += f" Its directory {visible_name(fs.display(parent))} does not exist either."
    return msg + " Use glob_search to find the right path."


def _is_utf16(head: bytes) -> bool:
    return head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))


def _lines(f: BinaryIO, head: bytes) -> Iterator[tuple[str, bool, bool]]:
    """Yield (text without newline, had CR before the newline, decoded cleanly)."""
    first = True
    for raw in f:
        if first and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8):]
        first = False
        raw = raw.removesuffix(b"\n")
        cr = raw.endswith(b"\r")
        if cr:
            raw = raw[:-1]
        try:
            yield raw.decode("utf-8"), cr, True
        except UnicodeDecodeError:
            yield raw.decode("utf-8", "replace"), cr, False


def _utf16_lines(f: BinaryIO) -> list[tuple[str, bool, bool]]:
    parts = f.read().decode("utf-16", "replace").split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return [(p.removesuffix("\r"), p.endswith("\r"), True) for p in parts]


def _read(fs: ScopedFs, path: str, offset: int, limit: int, windowed: bool,
          max_file_bytes: int, max_output_chars: int) -> ToolResult:
    try:
        target = fs.resolve(path)
    except FsError as exc:
        return ToolResult.error(f"read_file: {make_visible(str(exc))}")
    shown = visible_name(fs.display(target))
    try:
        f, st = fs.open_file(target)
    except NotFoundError:
        return ToolResult.error(_not_found(fs, path, target))
    except IsADirectoryFsError:
        return ToolResult.error(
            f"{shown} is a directory, not a file. To see what is in it, use glob_search with "
            f"base_dir='{shown}' and pattern='*' (or '**/*' for everything below it).")
    except FsError as exc:  # its message names the path: no hidden characters in it either
        return ToolResult.error(make_visible(str(exc)))
    with f:
        try:
            head = f.read(SNIFF_BYTES)
            kind = binary_kind(head)
            if kind is not None:
                return ToolResult.error(
                    f"Cannot show {shown}: it is a binary file ({kind}, {_human(st.st_size)}). "
                    "read_file only displays text. Do not retry with other offsets; if you "
                    "need facts about this file, use a tool that understands its format or "
                    "ask the person.")
            if st.st_size > max_file_bytes and not windowed:
                return ToolResult.error(
                    f"{shown} is {_human(st.st_size)}, above the {_human(max_file_bytes)} limit "
                    "for reading a file from the start without a window. Read a part with "
                    "offset and limit (e.g. offset=1, limit=500), or first find the relevant "
                    f"lines with grep_search (path='{shown}') and read around them.")
            f.seek(0)
            return _render(f, head, shown, offset, limit, max_output_chars)
        except OSError as exc:
            return ToolResult.error(f"Could not read {shown}: {exc.strerror or exc}.")


def _render(f: BinaryIO, head: bytes, shown: str, offset: int, limit: int,
            max_output_chars: int) -> ToolResult:
    out: list[str] = []
    used = 0
    last_shown = 0
    cut_lines = 0
    bad_utf8 = False
    crlf = False
    budget_hit = False
    lineno = 0
    exhausted = True
    known: list[tuple[str, bool, bool]] | None = _utf16_lines(f) if _is_utf16(head) else None
    source = known if known is not None else _lines(f, head)
    for lineno, (text, cr, clean) in enumerate(source, start=1):
        crlf = crlf or cr
        if lineno < offset:
            continue
        if lineno >= offset + limit or budget_hit:
            exhausted = False
            break
        bad_utf8 = bad_utf8 or not clean
        if len(text) > MAX_LINE_CHARS:
            cut_lines += 1
            text = (text[:MAX_LINE_CHARS] +
                    f" … [line truncated: {len(text)} characters in total]")
        line = f"{lineno:>6}\t{text}"
        if out and used + len(line) + 1 > max_output_chars:
            budget_hit = True
            exhausted = False
            break
        out.append(line)
        used += len(line) + 1
        last_shown = lineno
    total = lineno
    if not exhausted:
        total = len(known) if known is not None else lineno - 1 + _count_remaining_lines(f)
    if total == 0:
        return ToolResult.ok(f"({shown} is empty: 0 lines.)")
    if offset > total:
        return ToolResult.error(
            f"offset {offset} is past the end of {shown}, which has {total} line"
            f"{'s' if total != 1 else ''}. Use an offset between 1 and {total}.")
    notes: list[str] = []
    if budget_hit:
        notes.append(f"[Output stopped after line {last_shown} of {total} because it reached "
                     f"{max_output_chars} characters. Call read_file with "
                     f"offset={last_shown + 1} to continue.]")
    elif last_shown < total:
        notes.append(f"[Showing lines {offset}–{last_shown} of {total}. Call read_file with "
                     f"offset={last_shown + 1} to read more.]")
    if cut_lines:
        notes.append(f"[{cut_lines} line{'s were' if cut_lines != 1 else ' was'} longer than "
                     f"{MAX_LINE_CHARS} characters and cut; use grep_search to find text "
                     "inside long lines.]")
    if bad_utf8:
        notes.append("[The file is not valid UTF-8; undecodable bytes are shown as �.]")
    if crlf:
        notes.append("[The file uses CRLF (\\r\\n) line endings; they are not shown.]")
    return ToolResult.ok("\n".join(out + notes))


def _count_remaining_lines(f: BinaryIO) -> int:
    """Lines from the current position to the end, without decoding (fast on huge files).

    The caller has consumed one line past the window, so that line counts too.
    """
    count = 1
    last = b"\n"
    while True:
        chunk = f.read(1 << 20)
        if not chunk:
            break
        count += chunk.count(b"\n")
        last = chunk[-1:]
    if last != b"\n":
        count += 1
    return count


def create() -> ReadFileTool:
    return ReadFileTool()
