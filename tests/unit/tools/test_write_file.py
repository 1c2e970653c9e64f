"""write_file: modes, create_dirs, scope checks, atomicity, hard links and the preview diff."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from app.core.tools.base import PreviewableTool, RiskLevel, SubjectError, ToolCategory, ToolContext
from app.core.tools.builtin.write_file import create, unified_diff
from app.core.tools.default_registry import default_registry


@pytest.fixture
def doc(project: Path) -> Path:
    d = project / "doc"
    d.mkdir()
    return d


@pytest.fixture
def ctx(project: Path, doc: Path) -> ToolContext:
    return ToolContext(project_root=project, allowed_write_dirs=("doc",))


async def write(ctx: ToolContext, **args: object):
    return await create().execute(args, ctx)


def names(d: Path) -> list[str]:
    return sorted(os.listdir(d))


async def test_default_mode_overwrites_and_creates(doc: Path, ctx: ToolContext) -> None:
    r = await write(ctx, path="doc/a.md", content="one\n")
    assert not r.is_error and "Created doc/a.md (1 line, 4 bytes)" in r.content
    r = await write(ctx, path="doc/a.md", content="two\nlines\n")
    assert not r.is_error and "Overwrote doc/a.md" in r.content and "it was 4 bytes" in r.content
    assert (doc / "a.md").read_text() == "two\nlines\n"


async def test_create_mode_refuses_existing_file(doc: Path, ctx: ToolContext) -> None:
    (doc / "a.md").write_text("keep")
    r = await write(ctx, path="doc/a.md", content="new", mode="create")
    assert r.is_error and "already exists" in r.content and "overwrite" in r.content
    assert (doc / "a.md").read_text() == "keep"
    r = await write(ctx, path="doc/b.md", content="new", mode="create")
    assert not r.is_error and (doc / "b.md").read_text() == "new"


async def test_append_adds_to_the_end_and_creates(doc: Path, ctx: ToolContext) -> None:
    r = await write(ctx, path="doc/log.txt", content="a\n", mode="append")
    assert not r.is_error and "Created" in r.content
    r = await write(ctx, path="doc/log.txt", content="b\n", mode="append")
    assert not r.is_error and "Appended 1 line, 2 bytes to doc/log.txt (now 4 bytes)" in r.content
    assert (doc / "log.txt").read_text() == "a\nb\n"


async def test_content_is_written_exactly_as_utf8(doc: Path, ctx: ToolContext) -> None:
    text = "日本語\r\nno final newline"
    await write(ctx, path="doc/u.txt", content=text)
    assert (doc / "u.txt").read_bytes() == text.encode("utf-8")


async def test_create_dirs_default_creates_parents_inside_scope(doc: Path,
                                                               ctx: ToolContext) -> None:
    r = await write(ctx, path="doc/a/b/c.txt", content="x")
    assert not r.is_error and "Created directories: doc/a, doc/a/b" in r.content
    assert (doc / "a" / "b" / "c.txt").read_text() == "x"


async def test_create_dirs_false_refuses_and_creates_nothing(doc: Path, ctx: ToolContext) -> None:
    r = await write(ctx, path="doc/a/b/c.txt", content="x", create_dirs=False)
    assert r.is_error and "doc/a does not exist" in r.content and "create_dirs=true" in r.content
    assert names(doc) == []


async def test_missing_allowed_dir_is_created_only_with_create_dirs(project: Path) -> None:
    ctx = ToolContext(project_root=project, allowed_write_dirs=("out",))
    r = await write(ctx, path="out/x.txt", content="x", create_dirs=False)
    assert r.is_error and not (project / "out").exists()
    r = await write(ctx, path="out/x.txt", content="x")
    assert not r.is_error and (project / "out" / "x.txt").read_text() == "x"


async def test_writing_disabled_without_allowed_dirs(project: Path) -> None:
    ctx = ToolContext(project_root=project)
    r = await write(ctx, path="a.txt", content="x")
    assert r.is_error and "disabled" in r.content and "Configure" in r.content
    assert not (project / "a.txt").exists()


@pytest.mark.parametrize("path", ["a.txt", "../a.txt", "doc/../a.txt", "doc_evil/a.txt",
                                  "doc/../doc_evil/a.txt"])
async def test_outside_the_scope_is_refused(project: Path, ctx: ToolContext, path: str) -> None:
    (project / "doc_evil").mkdir()
    before = sorted(str(p) for p in project.parent.rglob("*"))
    r = await write(ctx, path=path, content="pwned")
    assert r.is_error and "outside the allowed write directories (doc)" in r.content
    assert sorted(str(p) for p in project.parent.rglob("*")) == before


async def test_absolute_path_inside_scope_is_fine(doc: Path, ctx: ToolContext) -> None:
    r = await write(ctx, path=str(doc / "abs.txt"), content="x")
    assert not r.is_error and (doc / "abs.txt").read_text() == "x"


async def test_tilde_is_expanded_before_the_check(project: Path, doc: Path, ctx: ToolContext,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(doc))
    r = await write(ctx, path="~/t.txt", content="x")
    assert not r.is_error and (doc / "t.txt").read_text() == "x"
    monkeypatch.setenv("HOME", str(project))
    r = await write(ctx, path="~/t.txt", content="x")
    assert r.is_error and not (project / "t.txt").exists()


async def test_symlink_to_file_inside_scope_writes_the_target(doc: Path,
                                                              ctx: ToolContext) -> None:
    (doc / "real.txt").write_text("old")
    os.symlink("real.txt", doc / "link.txt")
    r = await write(ctx, path="doc/link.txt", content="new")
    assert not r.is_error and "doc/real.txt" in r.content
    assert (doc / "real.txt").read_text() == "new" and (doc / "link.txt").is_symlink()


async def test_overwrite_preserves_mode_and_is_atomic(doc: Path, ctx: ToolContext) -> None:
    f = doc / "script.sh"
    f.write_text("old")
    f.chmod(0o751)
    ino = f.stat().st_ino
    r = await write(ctx, path="doc/script.sh", content="new")
    assert not r.is_error
    assert stat.S_IMODE(f.stat().st_mode) == 0o751
    assert f.stat().st_ino != ino  # replaced by rename, never rewritten in place
    assert names(doc) == ["script.sh"]  # no temporary files left behind


async def test_overwrite_never_writes_through_a_hard_link(project: Path, doc: Path,
                                                         ctx: ToolContext) -> None:
    other = project / "other.txt"
    other.write_text("original")
    os.link(other, doc / "linked.txt")
    r = await write(ctx, path="doc/linked.txt", content="changed")
    assert not r.is_error and "1 other hard link" in r.content
    assert other.read_text() == "original"
    assert (doc / "linked.txt").read_text() == "changed"


async def test_append_to_hard_linked_file_copies_then_replaces(project: Path, doc: Path,
                                                              ctx: ToolContext) -> None:
    other = project / "other.txt"
    other.write_text("base\n")
    os.link(other, doc / "linked.txt")
    r = await write(ctx, path="doc/linked.txt", content="more\n", mode="append")
    assert not r.is_error and "hard link" in r.content
    assert other.read_text() == "base\n"
    assert (doc / "linked.txt").read_text() == "base\nmore\n"


async def test_read_only_file_is_not_replaced(doc: Path, ctx: ToolContext) -> None:
    f = doc / "ro.txt"
    f.write_text("keep")
    f.chmod(0o444)
    r = await write(ctx, path="doc/ro.txt", content="x")
    assert r.is_error and "read-only" in r.content
    assert f.read_text() == "keep"


async def test_directory_as_target_is_refused(doc: Path, ctx: ToolContext) -> None:
    (doc / "sub").mkdir()
    r = await write(ctx, path="doc/sub", content="x")
    assert r.is_error and "directory" in r.content
    r = await write(ctx, path="doc/new/", content="x")
    assert r.is_error and "names a directory" in r.content
    assert names(doc) == ["sub"]


async def test_file_in_the_middle_of_the_path(doc: Path, ctx: ToolContext) -> None:
    (doc / "f").write_text("x")
    r = await write(ctx, path="doc/f/g.txt", content="y")
    assert r.is_error and "not a directory" in r.content


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("mode", ["overwrite", "append"])
async def test_fifo_is_refused_without_blocking(doc: Path, ctx: ToolContext, mode: str) -> None:
    os.mkfifo(doc / "pipe")
    r = await write(ctx, path="doc/pipe", content="x", mode=mode)
    assert r.is_error and "not a regular file" in r.content


@pytest.mark.parametrize("args, fragment", [
    ({"content": "x"}, "- path: required"),
    ({"path": "doc/a"}, "- content: required"),
    ({"path": "doc/a", "content": 5}, "must be a string"),
    ({"path": "doc/a", "content": "x", "mode": "truncate"},
     "mode: must be one of 'create', 'overwrite', 'append' (got 'truncate')"),
    ({"path": "doc/a", "content": "x", "create_dirs": "yes"}, "true or false"),
    ({"path": "doc/a\x00b", "content": "x"}, "NUL"),
    ({"path": "", "content": "x"}, "empty"),
    ({"path": "doc/a", "content": "\ud800"}, "UTF-8"),
    ({"path": "doc/a", "content": "x", "extra": 1}, "unknown property"),
])
async def test_bad_arguments_are_explained(doc: Path, ctx: ToolContext, args: dict,
                                           fragment: str) -> None:
    r = await create().execute(args, ctx)
    assert r.is_error and fragment in r.content
    assert names(doc) == []


async def test_content_size_limit(doc: Path, project: Path) -> None:
    ctx = ToolContext(project_root=project, allowed_write_dirs=("doc",),
                      tool_config={"write_file": {"max_content_bytes": 10}})
    r = await write(ctx, path="doc/a", content="x" * 11)
    assert r.is_error and "limit is 10" in r.content and not (doc / "a").exists()


# -- preview ---------------------------------------------------------------------------------

async def test_preview_of_new_file_is_a_diff_from_dev_null(doc: Path, ctx: ToolContext) -> None:
    tool = create()
    assert isinstance(tool, PreviewableTool)
    diff = await tool.preview({"path": "doc/n/new.md", "content": "a\nb\n"}, ctx)
    assert "Creates directories: doc/n" in diff
    assert "--- /dev/null" in diff and "+++ b/doc/n/new.md" in diff
    assert "+a\n+b\n" in diff
    assert names(doc) == []  # nothing written, no directory created


async def test_preview_of_overwrite_and_append(doc: Path, ctx: ToolContext) -> None:
    (doc / "a.txt").write_text("one\ntwo\n")
    tool = create()
    diff = await tool.preview({"path": "doc/a.txt", "content": "one\n2\n"}, ctx)
    assert "--- a/doc/a.txt" in diff and "-two\n" in diff and "+2\n" in diff
    diff = await tool.preview({"path": "doc/a.txt", "content": "three\n", "mode": "append"}, ctx)
    assert "+three\n" in diff and "-two" not in diff
    assert (doc / "a.txt").read_text() == "one\ntwo\n"


async def test_preview_marks_missing_final_newline(doc: Path, ctx: ToolContext) -> None:
    (doc / "a.txt").write_text("x\n")
    diff = await create().preview({"path": "doc/a.txt", "content": "x"}, ctx)
    assert "\\ No newline at end of file" in diff


async def test_preview_of_refused_call_says_so(project: Path, ctx: ToolContext) -> None:
    tool = create()
    text = await tool.preview({"path": "../x.txt", "content": "x"}, ctx)
    assert text.startswith("This call will be refused") and "outside" in text
    (project / "doc" / "e.txt").write_text("x")
    text = await tool.preview({"path": "doc/e.txt", "content": "x", "mode": "create"}, ctx)
    assert "already exists" in text
    text = await tool.preview({"path": "doc/e.txt"}, ctx)
    assert text.startswith("This call will fail") and "content" in text


async def test_preview_without_change_and_binary(doc: Path, ctx: ToolContext) -> None:
    (doc / "same.txt").write_text("same\n")
    assert "no changes" in await create().preview({"path": "doc/same.txt",
                                                   "content": "same\n"}, ctx)
    (doc / "b.bin").write_bytes(b"\x00\x01")
    text = await create().preview({"path": "doc/b.bin", "content": "t"}, ctx)
    assert "binary file" in text


def test_unified_diff_caps_huge_output() -> None:
    new = "".join(f"line {i}\n" for i in range(60_000))
    text = unified_diff(None, new, "big.txt")
    assert len(text) < 210_000 and "diff truncated" in text


# -- spec ------------------------------------------------------------------------------------

def test_spec_category_risk_subjects(project: Path, doc: Path) -> None:
    spec = create().spec
    assert spec.name == "write_file"
    assert spec.category is ToolCategory.FILE_SYSTEM and spec.risk is RiskLevel.HIGH
    assert spec.subject_kind == "path"
    assert spec.input_schema["additionalProperties"] is False
    assert set(spec.input_schema["properties"]["mode"]["enum"]) == {"create", "overwrite",
                                                                   "append"}
    os.symlink("/etc", doc / "etc")
    assert spec.subjects({"path": "doc/etc/passwd", "content": ""}, project) == ["/etc/passwd"]
    assert spec.subjects({"path": "doc/./x/../y", "content": ""}, project) == [str(doc / "y")]
    with pytest.raises(SubjectError):
        spec.subjects({"path": "x\x00", "content": ""}, project)


async def test_through_the_registry(doc: Path, ctx: ToolContext) -> None:
    registry = default_registry()
    r = await registry.execute("write_file", {"path": "doc/r.txt", "content": "x",
                                              "mode": "bogus"}, ctx)
    assert r.is_error and not (doc / "r.txt").exists()
    r = await registry.execute("write_file", {"path": "doc/r.txt", "content": "x"}, ctx)
    assert not r.is_error and (doc / "r.txt").read_text() == "x"
