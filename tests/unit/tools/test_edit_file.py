"""edit_file: the unique-match rule, its error texts, encodings, scope and the preview."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from app.core.tools.base import PreviewableTool, RiskLevel, ToolCategory, ToolContext
from app.core.tools.builtin.edit_file import create
from app.core.tools.fs.errors import WriteConflictError
from app.core.tools.fs.scope import ScopedFs
from app.core.tools.fs.writer import FileStamp


@pytest.fixture
def doc(project: Path) -> Path:
    d = project / "doc"
    d.mkdir()
    return d


@pytest.fixture
def ctx(project: Path, doc: Path) -> ToolContext:
    return ToolContext(project_root=project, allowed_write_dirs=("doc",))


async def edit(ctx: ToolContext, **args: object):
    return await create().execute(args, ctx)


SOURCE = "".join(f"line {i}\n" for i in range(1, 21))


async def test_unique_replacement_with_numbered_snippet(doc: Path, ctx: ToolContext) -> None:
    (doc / "f.txt").write_text(SOURCE)
    r = await edit(ctx, path="doc/f.txt", old_string="line 10\n", new_string="ten\nTEN\n")
    assert not r.is_error
    assert "Edited doc/f.txt: replaced 1 occurrence (line 10)." in r.content
    assert "    10\tten\n    11\tTEN\n" in r.content
    assert "     7\tline 7" in r.content and "    14\tline 13" in r.content  # 3 lines of context
    assert "line 3\n" not in r.content.split("reads:")[1]
    assert (doc / "f.txt").read_text() == SOURCE.replace("line 10\n", "ten\nTEN\n")


async def test_deleting_text_with_empty_new_string(doc: Path, ctx: ToolContext) -> None:
    (doc / "f.txt").write_text("keep\ndrop\nkeep2\n")
    r = await edit(ctx, path="doc/f.txt", old_string="drop\n", new_string="")
    assert not r.is_error and (doc / "f.txt").read_text() == "keep\nkeep2\n"


async def test_missing_old_string_is_refused_with_hints(doc: Path, ctx: ToolContext) -> None:
    (doc / "f.py").write_text("def f():\n    return 1\n")
    r = await edit(ctx, path="doc/f.py", old_string="def f():\n  return 1", new_string="x")
    assert r.is_error and "old_string was not found in doc/f.py" in r.content
    assert "occurs at line(s) 1" in r.content  # the first line is there; indentation differs
    assert (doc / "f.py").read_text() == "def f():\n    return 1\n"


async def test_line_number_prefix_hint(doc: Path, ctx: ToolContext) -> None:
    (doc / "f.txt").write_text("alpha\n")
    r = await edit(ctx, path="doc/f.txt", old_string="     1\talpha", new_string="b")
    assert r.is_error and "line-number prefixes" in r.content


async def test_whitespace_hint(doc: Path, ctx: ToolContext) -> None:
    (doc / "f.txt").write_text("alpha beta\n")
    r = await edit(ctx, path="doc/f.txt", old_string="\n\nalpha beta  ", new_string="b")
    assert r.is_error and "whitespace" in r.content


async def test_non_unique_is_refused_with_count_and_lines(doc: Path, ctx: ToolContext) -> None:
    (doc / "f.txt").write_text("x = 1\ny = 2\nx = 1\n\nx = 1\n")
    r = await edit(ctx, path="doc/f.txt", old_string="x = 1", new_string="x = 3")
    assert r.is_error
    assert "occurs 3 times" in r.content and "lines 1, 3, 5" in r.content
    assert "replace_all=true" in r.content
    assert (doc / "f.txt").read_text() == "x = 1\ny = 2\nx = 1\n\nx = 1\n"


async def test_replace_all(doc: Path, ctx: ToolContext) -> None:
    (doc / "f.txt").write_text("x = 1\ny = 2\nx = 1\n")
    r = await edit(ctx, path="doc/f.txt", old_string="x = 1", new_string="x = 3",
                   replace_all=True)
    assert not r.is_error and "replaced 2 occurrences (lines 1, 3 of the original)" in r.content
    assert (doc / "f.txt").read_text() == "x = 3\ny = 2\nx = 3\n"


async def test_replace_all_with_single_match_is_fine(doc: Path, ctx: ToolContext) -> None:
    (doc / "f.txt").write_text("a\n")
    r = await edit(ctx, path="doc/f.txt", old_string="a", new_string="b", replace_all=True)
    assert not r.is_error and (doc / "f.txt").read_text() == "b\n"


async def test_crlf_file_matches_lf_old_string_and_stays_crlf(doc: Path,
                                                             ctx: ToolContext) -> None:
    (doc / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    r = await edit(ctx, path="doc/w.txt", old_string="one\ntwo", new_string="1\n2")
    assert not r.is_error
    assert (doc / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_invalid_utf8_bytes_survive_an_edit(doc: Path, ctx: ToolContext) -> None:
    (doc / "l.txt").write_bytes(b"caf\xe9\nkey = old\n")
    r = await edit(ctx, path="doc/l.txt", old_string="old", new_string="new")
    assert not r.is_error
    assert (doc / "l.txt").read_bytes() == b"caf\xe9\nkey = new\n"


async def test_binary_and_utf16_files_are_refused(doc: Path, ctx: ToolContext) -> None:
    (doc / "b.bin").write_bytes(b"ab\x00cd")
    r = await edit(ctx, path="doc/b.bin", old_string="ab", new_string="x")
    assert r.is_error and "binary" in r.content
    (doc / "u.txt").write_bytes("abc".encode("utf-16"))
    r = await edit(ctx, path="doc/u.txt", old_string="abc", new_string="x")
    assert r.is_error and "UTF-16" in r.content


async def test_missing_file_points_to_write_file(doc: Path, ctx: ToolContext) -> None:
    r = await edit(ctx, path="doc/none.txt", old_string="a", new_string="b")
    assert r.is_error and "does not exist" in r.content and "write_file" in r.content
    assert os.listdir(doc) == []


async def test_edit_outside_scope_is_refused_before_reading(project: Path,
                                                            ctx: ToolContext) -> None:
    (project / "top.txt").write_text("secret a\n")
    r = await edit(ctx, path="top.txt", old_string="a", new_string="b")
    assert r.is_error and "outside the allowed write directories" in r.content
    assert "secret" not in r.content
    assert (project / "top.txt").read_text() == "secret a\n"


async def test_edit_through_symlink_leading_outside_is_refused(project: Path, doc: Path,
                                                               ctx: ToolContext) -> None:
    (project / "top.txt").write_text("a\n")
    os.symlink(project / "top.txt", doc / "link.txt")
    r = await edit(ctx, path="doc/link.txt", old_string="a", new_string="b")
    assert r.is_error and (project / "top.txt").read_text() == "a\n"


async def test_edit_of_hard_link_leaves_the_other_name_alone(project: Path, doc: Path,
                                                            ctx: ToolContext) -> None:
    (project / "top.txt").write_text("a\n")
    os.link(project / "top.txt", doc / "hl.txt")
    r = await edit(ctx, path="doc/hl.txt", old_string="a", new_string="b")
    assert not r.is_error
    assert (project / "top.txt").read_text() == "a\n"
    assert (doc / "hl.txt").read_text() == "b\n"


async def test_mode_is_preserved(doc: Path, ctx: ToolContext) -> None:
    f = doc / "run.sh"
    f.write_text("echo a\n")
    f.chmod(0o700)
    await edit(ctx, path="doc/run.sh", old_string="a", new_string="b")
    assert stat.S_IMODE(f.stat().st_mode) == 0o700 and f.read_text() == "echo b\n"


async def test_file_changed_between_read_and_write_is_a_conflict(doc: Path,
                                                                  project: Path) -> None:
    f = doc / "c.txt"
    f.write_text("v1\n")
    fs = ScopedFs(project, [doc])
    _, stamp = fs.read_bytes(f)
    f.write_text("v2 (someone else)\n")
    os.utime(f, ns=(1, 1))
    with pytest.raises(WriteConflictError):
        fs.write_bytes("doc/c.txt", b"mine\n", "overwrite", expect=stamp)
    assert f.read_text() == "v2 (someone else)\n"
    assert isinstance(stamp, FileStamp)


@pytest.mark.parametrize("args, fragment", [
    ({"path": "doc/f.txt", "old_string": "", "new_string": "x"},
     "old_string: must be at least 1 characters long"),
    ({"path": "doc/f.txt", "old_string": "a", "new_string": "a"}, "identical"),
    ({"path": "doc/f.txt", "new_string": "a"}, "- old_string: required"),
    ({"path": "doc/f.txt", "old_string": "a"}, "- new_string: required"),
    ({"path": "doc/f.txt", "old_string": "a", "new_string": "b", "replace_all": 1},
     "true or false"),
    ({"path": "doc/f\x00.txt", "old_string": "a", "new_string": "b"}, "NUL"),
    ({"path": "doc/f.txt", "old_string": "a", "new_string": "b", "x": 1}, "unknown property"),
])
async def test_bad_arguments_are_explained(doc: Path, ctx: ToolContext, args: dict,
                                           fragment: str) -> None:
    (doc / "f.txt").write_text("a\n")
    r = await create().execute(args, ctx)
    assert r.is_error and fragment in r.content
    assert (doc / "f.txt").read_text() == "a\n"


async def test_preview_is_a_diff_and_writes_nothing(doc: Path, ctx: ToolContext) -> None:
    (doc / "f.txt").write_text(SOURCE)
    tool = create()
    assert isinstance(tool, PreviewableTool)
    diff = await tool.preview({"path": "doc/f.txt", "old_string": "line 5\n",
                               "new_string": "five\n"}, ctx)
    assert "--- a/doc/f.txt" in diff and "+++ b/doc/f.txt" in diff
    assert "-line 5\n+five\n" in diff and "@@ -2,7 +2,7 @@" in diff
    assert (doc / "f.txt").read_text() == SOURCE


async def test_preview_of_failing_edits(project: Path, doc: Path, ctx: ToolContext) -> None:
    (doc / "f.txt").write_text("a a\n")
    tool = create()
    text = await tool.preview({"path": "doc/f.txt", "old_string": "a", "new_string": "b"}, ctx)
    assert text.startswith("This call will fail") and "occurs 2 times" in text
    text = await tool.preview({"path": "x.txt", "old_string": "a", "new_string": "b"}, ctx)
    assert text.startswith("This call will be refused")


def test_spec() -> None:
    spec = create().spec
    assert spec.name == "edit_file"
    assert spec.category is ToolCategory.FILE_SYSTEM and spec.risk is RiskLevel.HIGH
    assert spec.subject_kind == "path"
    assert spec.input_schema["additionalProperties"] is False
    assert spec.input_schema["required"] == ["path", "old_string", "new_string"]
