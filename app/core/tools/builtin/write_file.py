"""write_file: create, overwrite or append to a file inside the allowed write dirs.

Everything that touches the disk goes through ScopedFs (see its docstring for how escapes via
``..``, ``~``, symlinks, hard links and races are closed). The default mode is ``overwrite``, as
by design: the approval dialog shows the person the diff before anything is written.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Mapping
from typing import Any, Final, Literal

from app.core.tools.arguments import ToolInputError, path_subjects
from app.core.tools.base import (
    RiskLevel,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
    parse_input,
)
from app.core.tools.config_fields import ConfigField, FieldKind
from app.core.tools.fs.errors import FsError
from app.core.tools.fs.paths import printable
from app.core.tools.fs.scope import ScopedFs, write_scope_lift, write_scope_refusal
from app.core.tools.fs.writer import WritePlan, WriteReport
from app.core.tools.params.declaration import Params, param
from app.core.tools.params.problems import ParamsError

DEFAULT_MODE: Final = "overwrite"  # Final: typed as the Literal, for the params default
MAX_CONTENT_BYTES = 10 * 1024 * 1024
MAX_DIFF_CHARS = 200_000
MAX_DIFF_INPUT = 1_000_000  # beyond this, difflib is too slow to be worth it

# New profiles write the open project ("." is the project folder; ScopedFs keeps every write
# inside it). DOCS_ONLY_WRITE_DIRS is the earlier, narrower default: enter "doc" in the Write
# folders to go back to it.
DEFAULT_WRITE_DIRS: tuple[str, ...] = (".",)
DOCS_ONLY_WRITE_DIRS: tuple[str, ...] = ("doc",)

# The write folders, shared with edit_file: both tools write, so both are confined the same way.
WRITE_DIRS_FIELD = ConfigField(
    "allowed_write_dirs", "Write folders", FieldKind.FOLDER_LIST, default=(),
    help="Relative folders are inside the project; \".\" is the whole project (the default). "
         "Enter \"doc\" alone to let the tool write only the project's doc folder. Nothing "
         "outside these folders can be written, whatever the approval.")


class WriteFileParams(Params):
    path: str = param(description="File to write, relative to the working directory or "
                                  "absolute; must lie inside an allowed write directory.")
    content: str = param(description="The text to write.")
    # The order of WRITE_MODES (scoped_fs), which the schema's enum has always listed.
    mode: Literal["create", "overwrite", "append"] = param(
        default=DEFAULT_MODE,
        description="'overwrite' (default): replace or create; 'create': new file only; "
                    "'append': add to the end.")
    create_dirs: bool = param(default=True,
                              description="Create missing parent directories (inside the "
                                          "allowed directory). Default true.")


def count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _diff_lines(text: str) -> list[str]:
    if not text:
        return []
    lines = [line + "\n" for line in text.split("\n")]
    if text.endswith("\n"):
        lines.pop()
    else:
        lines[-1] += "\\ No newline at end of file\n"
    return lines


def unified_diff(old: str | None, new: str, shown: str, context: int = 3) -> str:
    """A git-style unified diff (``old`` None means the file does not exist yet), size-capped."""
    if old is not None and old == new:
        return f"(no changes: {shown} already has exactly this content)"
    if len(old or "") > MAX_DIFF_INPUT or len(new) > MAX_DIFF_INPUT:
        return _summary_diff(old, new, shown)
    text = "".join(difflib.unified_diff(
        _diff_lines(old or ""), _diff_lines(new),
        fromfile="/dev/null" if old is None else f"a/{shown}", tofile=f"b/{shown}", n=context))
    return _cap(printable(text))


def _summary_diff(old: str | None, new: str, shown: str) -> str:
    head = f"--- {'/dev/null' if old is None else 'a/' + shown}\n+++ b/{shown}\n"
    if old is not None and new.startswith(old):
        added = new[len(old):]
        body = f"(large file: {len(old)} characters unchanged, then these lines are added)\n"
        return _cap(printable(head + body + "".join("+" + ln for ln in _diff_lines(added))))
    body = (f"(large file: the whole content is replaced; {len(old or '')} → {len(new)} "
            "characters; new content follows)\n")
    return _cap(printable(head + body + "".join("+" + ln for ln in _diff_lines(new))))


def _cap(text: str) -> str:
    if len(text) <= MAX_DIFF_CHARS:
        return text
    cut = text.rfind("\n", 0, MAX_DIFF_CHARS) + 1 or MAX_DIFF_CHARS
    rest = text[cut:].count("\n")
    return text[:cut] + f"[… diff truncated: {rest} more lines not shown]\n"


def _decode_existing(data: bytes) -> str | None:
    """Existing content as text for a diff, or None when it is binary."""
    if b"\x00" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


class WriteFileTool:
    spec = ToolSpec(
        name="write_file",
        description=(
            "Write text to a file. mode: 'overwrite' (default) replaces the whole file or "
            "creates it; 'create' only creates a new file and fails if it exists; 'append' adds "
            "content to the end (creating the file if needed). Missing parent directories are "
            "created unless create_dirs is false. Writing is only possible inside the allowed "
            "write directories configured for this tool; paths are resolved first (.., ~, "
            "symlinks), so a path that leads outside is refused. The write is atomic. To change "
            "part of an existing file, prefer edit_file. content is written exactly as given "
            "(UTF-8): include the final newline if the file should end with one."),
        input_schema=WriteFileParams.json_schema(),
        params=WriteFileParams,
        category=ToolCategory.FILE_SYSTEM,
        risk=RiskLevel.HIGH,
        prompt_conventions=("write_file creates a file or replaces it whole; file tools write only "
                            "inside the folders the user allowed for writing.",),
        prompt_order=30,
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
    def _encode(content: str, limit: int) -> bytes:
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ToolInputError(f"content contains a character that cannot be written as "
                                 f"UTF-8 at position {exc.start} (a lone surrogate?).") from None
        if len(data) > limit:
            raise ToolInputError(f"content is {len(data)} bytes; the limit is {limit}. Split it "
                                 "into several calls with mode 'append'.")
        return data

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        p = parse_input(WriteFileParams, "write_file", input)
        if isinstance(p, ToolResult):
            return p
        path, content, mode, create_dirs = p.path, p.content, p.mode, p.create_dirs
        try:
            data = self._encode(content, int(ctx.config_for("write_file").get(
                "max_content_bytes", MAX_CONTENT_BYTES)))
        except ToolInputError as exc:
            return ToolResult.error(f"write_file: {exc}")
        fs = ScopedFs.from_context(ctx)
        try:
            report = await asyncio.to_thread(fs.write_bytes, path, data, mode,
                                             create_dirs=create_dirs)
        except FsError as exc:
            return ToolResult.error(f"write_file: {exc}")
        return ToolResult.ok(describe_write(fs, report, content))

    async def preview(self, input: Mapping[str, Any], ctx: ToolContext) -> str:
        """The diff this call would make, computed without writing anything."""
        try:
            p = WriteFileParams.parse(input)
        except ParamsError as err:
            return f"This call will fail: {err.message_for('write_file')}"
        fs = ScopedFs.from_context(ctx)
        try:
            return await asyncio.to_thread(_preview, fs, p.path, p.content, p.mode,
                                           p.create_dirs)
        except FsError as exc:
            return f"This call will be refused: {exc}"


def _preview(fs: ScopedFs, path: str, content: str, mode: str, create_dirs: bool) -> str:
    plan: WritePlan = fs.check_write(path, mode, create_dirs)
    shown = fs.display(plan.target)
    lines: list[str] = []
    if plan.missing_dirs:
        lines.append("Creates directories: " + ", ".join(fs.display(d) for d in plan.missing_dirs))
    old: str | None = None
    if plan.exists:
        data, _ = fs.read_bytes(plan.target)
        old = _decode_existing(data)
        if old is None:
            what = "appends to" if mode == "append" else "replaces"
            lines.append(f"{what.capitalize()} the binary file {shown} ({len(data)} bytes) "
                         f"with {len(content.encode('utf-8', 'replace'))} bytes of text.")
            return "\n".join(lines)
    new = (old or "") + content if mode == "append" else content
    lines.append(unified_diff(old, new, shown))
    return "\n".join(lines)


def describe_write(fs: ScopedFs, report: WriteReport, content: str) -> str:
    shown = fs.display(report.target)
    n = count_lines(content)
    size = f"{n} line{'s' if n != 1 else ''}, {report.bytes_written} bytes"
    if report.mode == "append" and not report.created:
        now = (report.previous_size or 0) + report.bytes_written
        msg = f"Appended {size} to {shown} (now {now} bytes)."
    elif report.created:
        msg = f"Created {shown} ({size})."
    else:
        msg = f"Overwrote {shown} ({size}; it was {report.previous_size} bytes)."
    if report.created_dirs:
        made = ", ".join(fs.display(d) for d in report.created_dirs)
        msg += f" Created directories: {made}."
    if report.other_links:
        msg += (f" Note: the file had {report.other_links} other hard link"
                f"{'s' if report.other_links != 1 else ''}; they keep the previous content, "
                "because the write gave this name a new file.")
    return msg


def create() -> WriteFileTool:
    return WriteFileTool()
