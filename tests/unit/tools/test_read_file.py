"""read_file: numbering, windows, limits, refusals, and what the model is told."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.tools.base import RiskLevel, SubjectError, ToolCategory, ToolContext
from app.core.tools.builtin.read_file import DEFAULT_LIMIT, MAX_LINE_CHARS, create
from app.core.tools.default_registry import default_registry


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(project_root=project)


async def read(ctx: ToolContext, **args: object):
    return await create().execute(args, ctx)


async def test_lines_are_numbered_like_cat_n(project: Path, ctx: ToolContext) -> None:
    (project / "a.txt").write_text("alpha\nbeta\n\ngamma")
    r = await read(ctx, path="a.txt")
    assert not r.is_error
    assert r.content == "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma"


async def test_absolute_path_and_reads_outside_working_dir(project: Path, tmp_path: Path,
                                                           ctx: ToolContext) -> None:
    other = tmp_path / "elsewhere.txt"
    other.write_text("x\n")
    r = await read(ctx, path=str(other))
    assert not r.is_error and r.content == "     1\tx"


async def test_tilde_expands_to_home(project: Path, tmp_path: Path, ctx: ToolContext,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.md").write_text("hi\n")
    monkeypatch.setenv("HOME", str(home))
    r = await read(ctx, path="~/notes.md")
    assert not r.is_error and "hi" in r.content


async def test_dotdot_and_symlinks_are_followed_for_reading(project: Path,
                                                            ctx: ToolContext) -> None:
    (project / "sub").mkdir()
    (project / "real.txt").write_text("real\n")
    os.symlink(project / "real.txt", project / "sub" / "link.txt")
    r = await read(ctx, path="sub/../sub/link.txt")
    assert not r.is_error and "real" in r.content


async def test_offset_and_limit_window(project: Path, ctx: ToolContext) -> None:
    (project / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 51)))
    r = await read(ctx, path="n.txt", offset=10, limit=3)
    lines = r.content.splitlines()
    assert lines[:3] == ["    10\tline 10", "    11\tline 11", "    12\tline 12"]
    assert "[Showing lines 10–12 of 50. Call read_file with offset=13 to read more.]" in r.content


async def test_offset_zero_means_start(project: Path, ctx: ToolContext) -> None:
    (project / "n.txt").write_text("a\nb\n")
    r = await read(ctx, path="n.txt", offset=0)
    assert r.content.startswith("     1\ta")


async def test_default_limit_is_2000_lines_and_says_how_to_continue(project: Path,
                                                                   ctx: ToolContext) -> None:
    (project / "big.txt").write_text("".join(f"{i}\n" for i in range(1, 2501)))
    r = await read(ctx, path="big.txt")
    numbered = [ln for ln in r.content.splitlines() if "\t" in ln]
    assert len(numbered) == DEFAULT_LIMIT == 2000
    assert numbered[-1] == "  2000\t2000"
    assert "of 2500" in r.content and "offset=2001" in r.content


async def test_last_window_has_no_continuation_marker(project: Path, ctx: ToolContext) -> None:
    (project / "n.txt").write_text("".join(f"{i}\n" for i in range(1, 11)))
    r = await read(ctx, path="n.txt", offset=8)
    assert r.content.splitlines() == ["     8\t8", "     9\t9", "    10\t10"]


async def test_total_counts_a_final_line_without_newline(project: Path,
                                                         ctx: ToolContext) -> None:
    (project / "n.txt").write_text("a\nb\nc")
    r = await read(ctx, path="n.txt", limit=1)
    assert "of 3." in r.content


async def test_offset_past_end_is_an_error_naming_the_length(project: Path,
                                                             ctx: ToolContext) -> None:
    (project / "n.txt").write_text("a\nb\n")
    r = await read(ctx, path="n.txt", offset=5)
    assert r.is_error
    assert "has 2 lines" in r.content and "between 1 and 2" in r.content


async def test_long_lines_are_cut_with_a_marker(project: Path, ctx: ToolContext) -> None:
    (project / "long.txt").write_text("x" * 5000 + "\nshort\n")
    r = await read(ctx, path="long.txt")
    first = r.content.splitlines()[0]
    assert first.startswith("     1\t" + "x" * MAX_LINE_CHARS + " … [line truncated: 5000")
    assert "1 line was longer than 2000 characters" in r.content
    assert "     2\tshort" in r.content


async def test_binary_file_is_refused_with_advice(project: Path, ctx: ToolContext) -> None:
    (project / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(100))
    r = await read(ctx, path="img.png")
    assert r.is_error
    assert "binary file" in r.content and "PNG image" in r.content
    assert "only displays text" in r.content


async def test_huge_file_needs_a_window(project: Path) -> None:
    ctx = ToolContext(project_root=project, tool_config={"read_file": {"max_file_bytes": 1000}})
    (project / "huge.log").write_text("".join(f"entry {i}\n" for i in range(1000)))
    r = await read(ctx, path="huge.log")
    assert r.is_error and "offset and limit" in r.content and "grep_search" in r.content
    r = await read(ctx, path="huge.log", offset=500, limit=2)
    assert not r.is_error
    assert r.content.splitlines()[:2] == ["   500\tentry 499", "   501\tentry 500"]
    assert "of 1000" in r.content


async def test_invalid_utf8_is_replaced_and_noted(project: Path, ctx: ToolContext) -> None:
    (project / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    r = await read(ctx, path="latin1.txt")
    assert not r.is_error
    assert "caf\ufffd" in r.content
    assert "not valid UTF-8" in r.content


async def test_utf16_with_bom_is_decoded(project: Path, ctx: ToolContext) -> None:
    (project / "w.txt").write_bytes("héllo\nwörld\n".encode("utf-16"))
    r = await read(ctx, path="w.txt")
    assert not r.is_error
    assert r.content == "     1\théllo\n     2\twörld"


async def test_utf8_bom_is_not_shown(project: Path, ctx: ToolContext) -> None:
    (project / "b.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    r = await read(ctx, path="b.txt")
    assert r.content == "     1\thello"


async def test_crlf_is_stripped_and_noted(project: Path, ctx: ToolContext) -> None:
    (project / "w.txt").write_bytes(b"a\r\nb\r\n")
    r = await read(ctx, path="w.txt")
    assert r.content.startswith("     1\ta\n     2\tb\n")
    assert "CRLF" in r.content


async def test_empty_file(project: Path, ctx: ToolContext) -> None:
    (project / "e.txt").write_text("")
    r = await read(ctx, path="e.txt")
    assert not r.is_error and "empty" in r.content


async def test_directory_points_to_glob_search(project: Path, ctx: ToolContext) -> None:
    (project / "src").mkdir()
    r = await read(ctx, path="src")
    assert r.is_error and "is a directory" in r.content and "glob_search" in r.content


async def test_missing_file_suggests_close_names(project: Path, ctx: ToolContext) -> None:
    (project / "config.toml").write_text("")
    r = await read(ctx, path="confg.toml")
    assert r.is_error and "File not found: confg.toml" in r.content
    assert "Did you mean: config.toml?" in r.content


async def test_missing_directory_is_mentioned(project: Path, ctx: ToolContext) -> None:
    r = await read(ctx, path="nope/file.txt")
    assert r.is_error and "nope does not exist either" in r.content


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
async def test_fifo_is_refused_without_blocking(project: Path, ctx: ToolContext) -> None:
    os.mkfifo(project / "pipe")
    r = await read(ctx, path="pipe")
    assert r.is_error and "not a regular file" in r.content


async def test_output_budget_cuts_at_a_line_and_says_where(project: Path) -> None:
    ctx = ToolContext(project_root=project, tool_config={"read_file": {"max_output_chars": 200}})
    (project / "n.txt").write_text("".join(f"{'y' * 40}\n" for _ in range(20)))
    r = await read(ctx, path="n.txt")
    numbered = [ln for ln in r.content.splitlines() if "\t" in ln]
    assert 1 <= len(numbered) < 20
    assert f"offset={len(numbered) + 1} to continue" in r.content
    assert "of 20" in r.content


@pytest.mark.parametrize("args, fragment", [
    ({}, "- path: required"),
    ({"path": 3}, "must be a string"),
    ({"path": ""}, "empty"),
    ({"path": "a\x00b"}, "NUL"),
    ({"path": "a.txt", "limit": 0}, "at least 1"),
    ({"path": "a.txt", "offset": -1}, "at least 0"),
    ({"path": "a.txt", "offset": "3"}, "integer"),
    ({"path": "a.txt", "bogus": 1}, "unknown property"),
])
async def test_bad_arguments_are_explained(project: Path, ctx: ToolContext, args: dict,
                                           fragment: str) -> None:
    (project / "a.txt").write_text("a\n")
    r = await create().execute(args, ctx)
    assert r.is_error and fragment in r.content


def test_spec_category_risk_and_schema() -> None:
    spec = create().spec
    assert spec.name == "read_file"
    assert spec.category is ToolCategory.READ_ONLY and spec.risk is RiskLevel.LOW
    assert spec.subject_kind == "path"
    assert spec.input_schema["additionalProperties"] is False
    assert spec.input_schema["required"] == ["path"]


def test_subject_is_the_resolved_path(project: Path, tmp_path: Path) -> None:
    (project / "doc").mkdir()
    os.symlink(tmp_path, project / "doc" / "out")
    spec = create().spec
    assert spec.subjects({"path": "doc/../x.txt"}, project) == [str(project / "x.txt")]
    assert spec.subjects({"path": "doc/out/s.txt"}, project) == [str(tmp_path / "s.txt")]
    with pytest.raises(SubjectError):
        spec.subjects({"path": "a\x00b"}, project)
    with pytest.raises(SubjectError):
        spec.subjects({"path": "relative.txt"}, None)


async def test_registered_and_schema_validated_by_registry(project: Path,
                                                           ctx: ToolContext) -> None:
    registry = default_registry()
    assert registry.get("read_file") is not None
    r = await registry.execute("read_file", {"path": "a", "limit": "many"}, ctx)
    assert r.is_error and "Invalid input for read_file" in r.content
