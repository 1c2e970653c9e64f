"""edit_file: replace an exact piece of text in a file.

The unique-match rule keeps edits unambiguous: a missing or repeated ``old_string`` is refused
with the count and line numbers, so the model can add context instead of guessing. The file is
rewritten atomically through ScopedFs, and only if it did not change since it was read.
"""

from __future__ import annotations

import asyncio
import codecs
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.tools.arguments import ToolInputError, path_subjects
from app.core.tools.base import RiskLevel, ToolCategory, ToolContext, ToolResult, ToolSpec
from app.core.tools.builtin.write_file import DEFAULT_WRITE_DIRS, WRITE_DIRS_FIELD, unified_diff
from app.core.tools.fs.errors import FsError, NotFoundError
from app.core.tools.fs.paths import printable
from app.core.tools.fs.scope import ScopedFs, write_scope_lift, write_scope_refusal
from app.core.tools.fs.writer import FileStamp
from app.core.tools.params.declaration import Params, param
from app.core.tools.params.problems import ParamsError

MAX_EDIT_BYTES = 10 * 1024 * 1024
SNIPPET_CONTEXT = 3
MAX_SNIPPET_LINES = 30
MAX_LISTED = 20
_LINE_NUMBER_PREFIX = re.compile(r"^ *\d+\t", re.MULTILINE)


class EditFileParams(Params):
    path: str = param(description="File to edit, relative to the working directory or "
                                  "absolute.")
    old_string: str = param(min_length=1, description="The exact text to replace.")
    new_string: str = param(description="The replacement text (may be empty to delete).")
    replace_all: bool = param(default=False,
                              description="Replace every occurrence (default false: "
                                          "old_string must be unique).")


@dataclass(frozen=True)
class EditPlan:
    target: Path
    shown: str
    old_text: str
    new_text: str
    stamp: FileStamp
    count: int
    match_lines: list[int]
    first_line: int
    new_string_lines: int


def _line_list(lines: list[int]) -> str:
    shown = ", ".join(str(n) for n in lines[:MAX_LISTED])
    return shown + (f", … ({len(lines) - MAX_LISTED} more)" if len(lines) > MAX_LISTED else "")


def _occurrences(text: str, needle: str) -> list[int]:
    """Start offsets of non-overlapping occurrences, as str.replace sees them."""
    out = []
    i = text.find(needle)
    while i >= 0:
        out.append(i)
        i = text.find(needle, i + len(needle))
    return out


def _line_numbers(text: str, offsets: list[int]) -> list[int]:
    lines, line, last = [], 1, 0
    for off in offsets:
        line += text.count("\n", last, off)
        last = off
        lines.append(line)
    return lines


def _not_found_hint(text: str, old: str) -> str:
    hints = []
    if _LINE_NUMBER_PREFIX.search(old):
        hints.append("old_string seems to contain line-number prefixes from read_file output "
                     "(like '    12<TAB>'); remove them.")
    stripped = old.strip()
    if stripped and stripped != old and stripped in text:
        hints.append("It matches when leading/trailing whitespace or blank lines are ignored; "
                     "copy the surrounding whitespace exactly.")
    first = next((ln.strip() for ln in old.split("\n") if ln.strip()), "")
    if first:
        hits = [i for i, ln in enumerate(text.split("\n"), start=1) if first in ln]
        if hits:
            hints.append(f"The first non-blank line of old_string occurs at line(s) "
                         f"{_line_list(hits)}; the difference is further on or in indentation.")
    return (" " + " ".join(hints)) if hints else ""


def _snippet(text: str, first_line: int, changed_lines: int) -> str:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    start = max(1, first_line - SNIPPET_CONTEXT)
    end = min(len(lines), first_line + max(changed_lines, 1) - 1 + SNIPPET_CONTEXT)
    out: list[str] = []
    for n in range(start, end + 1):
        if len(out) >= MAX_SNIPPET_LINES:
            out.append(f"[… {end - n + 1} more changed lines; use read_file to see them]")
            break
        out.append(f"{n:>6}\t{lines[n - 1].removesuffix(chr(13))}")
    return printable("\n".join(out))


class EditFileTool:
    spec = ToolSpec(
        name="edit_file",
        description=(
            "Replace exact text in an existing file. old_string must match the file exactly — "
            "same whitespace and indentation, without read_file's line-number prefixes — and "
            "must occur exactly once, unless replace_all is true (then every occurrence is "
            "replaced). If it occurs several times, include more surrounding lines to make it "
            "unique. Read the file first. Only files inside the allowed write directories can "
            "be edited. Returns the changed lines with line numbers. To create a file or "
            "replace it entirely, use write_file."),
        input_schema=EditFileParams.json_schema(),
        params=EditFileParams,
        category=ToolCategory.FILE_SYSTEM,
        risk=RiskLevel.HIGH,
        prompt_conventions=("edit_file replaces exact text: old_string must match the file exactly "
                            "(same whitespace, without read_file's line-number prefixes) and occur "
                            "once; use write_file to create a file or replace it entirely.",),
        prompt_order=20,
        subjects_fn=path_subjects("path"),
        subject_kind="path",
        default_config={"allowed_write_dirs": list(DEFAULT_WRITE_DIRS)},
        config_fields=(WRITE_DIRS_FIELD,),
        changes_files=True,
        undoable=True,
        capability_refusal=write_scope_refusal("path"),
        capability_lift=write_scope_lift("path"),
    )

    @staticmethod
    def _parse(input: Mapping[str, Any]) -> EditFileParams:
        p = EditFileParams.parse(input)
        # A cross-field check the schema cannot express.
        if p.old_string == p.new_string:
            raise ToolInputError("old_string and new_string are identical, so there is nothing "
                                 "to change.")
        return p

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            p = self._parse(input)
        except ParamsError as err:
            return ToolResult.error(err.message_for("edit_file"))
        except ToolInputError as exc:
            return ToolResult.error(f"edit_file: {exc}")
        fs = ScopedFs.from_context(ctx)
        try:
            return await asyncio.to_thread(_edit, fs, p.path, p.old_string, p.new_string,
                                           p.replace_all, True)
        except FsError as exc:
            return ToolResult.error(f"edit_file: {exc}")

    async def preview(self, input: Mapping[str, Any], ctx: ToolContext) -> str:
        """The diff this edit would make, without writing anything."""
        try:
            p = self._parse(input)
        except ParamsError as err:
            return f"This call will fail: {err.message_for('edit_file')}"
        except ToolInputError as exc:
            return f"This call will fail: {exc}"
        fs = ScopedFs.from_context(ctx)
        try:
            result = await asyncio.to_thread(_edit, fs, p.path, p.old_string, p.new_string,
                                             p.replace_all, False)
        except FsError as exc:
            return f"This call will be refused: {exc}"
        return result.content if not result.is_error else f"This call will fail: {result.content}"


def _plan(fs: ScopedFs, path: str, old: str, new: str, replace_all: bool) -> EditPlan | str:
    try:
        plan = fs.check_write(path, "overwrite", False)  # refuse out-of-scope before reading
    except NotFoundError:  # a missing parent directory
        raise NotFoundError(f"{fs.display(fs.resolve(path))} does not exist. To create a new "
                            "file use write_file.") from None
    shown = fs.display(plan.target)
    if not plan.exists:
        raise NotFoundError(f"{shown} does not exist. To create a new file use write_file.")
    data, stamp = fs.read_bytes(plan.target)
    if len(data) > MAX_EDIT_BYTES:
        return (f"{shown} is {len(data)} bytes; edit_file handles files up to "
                f"{MAX_EDIT_BYTES} bytes.")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or b"\x00" in data[:8192]:
        return f"{shown} is a binary or UTF-16 file; edit_file only edits UTF-8 text files."
    # surrogateescape: bytes that are not UTF-8 survive the round trip unchanged.
    text = data.decode("utf-8", "surrogateescape")
    offsets = _occurrences(text, old)
    if not offsets and "\r\n" in text and "\n" in old and "\r\n" not in old:
        crlf_old = old.replace("\n", "\r\n")
        offsets = _occurrences(text, crlf_old)
        if offsets:  # the file uses CRLF; keep it that way
            old, new = crlf_old, new.replace("\r\n", "\n").replace("\n", "\r\n")
    if not offsets:
        return (f"old_string was not found in {shown}. It must match the file exactly, "
                f"including whitespace and indentation.{_not_found_hint(text, old)} Read the "
                "file with read_file and copy the exact text.")
    lines = _line_numbers(text, offsets)
    if len(offsets) > 1 and not replace_all:
        return (f"old_string occurs {len(offsets)} times in {shown} (at lines "
                f"{_line_list(lines)}). Include more surrounding lines in old_string so that it "
                "matches exactly one place, or set replace_all=true to replace every occurrence.")
    new_text = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    return EditPlan(plan.target, shown, text, new_text, stamp, len(offsets), lines, lines[0],
                    new.count("\n") + 1)


def _edit(fs: ScopedFs, path: str, old: str, new: str, replace_all: bool,
          write: bool) -> ToolResult:
    plan = _plan(fs, path, old, new, replace_all)
    if isinstance(plan, str):
        return ToolResult.error(plan)
    if not write:
        return ToolResult.ok(unified_diff(plan.old_text, plan.new_text, plan.shown))
    fs.write_bytes(str(plan.target), plan.new_text.encode("utf-8", "surrogateescape"),
                   "overwrite", expect=plan.stamp)
    where = (f"line {plan.first_line}" if plan.count == 1
             else f"lines {_line_list(plan.match_lines)} of the original")
    head = (f"Edited {plan.shown}: replaced {plan.count} occurrence"
            f"{'s' if plan.count != 1 else ''} ({where}).")
    return ToolResult.ok(f"{head}\nThe edited region now reads:\n"
                         f"{_snippet(plan.new_text, plan.first_line, plan.new_string_lines)}")


def create() -> EditFileTool:
    return EditFileTool()
