"""list_directory: tree shape, ordering, depth, .gitignore, hidden files, cap and errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.tools.base import RiskLevel, ToolCategory, ToolContext
from app.core.tools.builtin import list_directory
from app.core.tools.builtin.list_directory import ListDirectoryParams, create


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(project_root=project)


def touch(root: Path, *rels: str) -> None:
    for rel in rels:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(rel)


async def listing(ctx: ToolContext, **args: object) -> list[str]:
    """The tree lines, without the heading."""
    r = await create().execute(args, ctx)
    assert not r.is_error, r.content
    return r.content.splitlines()[1:]


async def test_folders_first_then_files_sorted_and_indented(project: Path,
                                                            ctx: ToolContext) -> None:
    touch(project, "b.txt", "A.md", "src/z.py", "src/a.py", "src/pkg/m.py", "docs/x.md")
    assert await listing(ctx) == [
        "docs/", "  x.md",
        "src/", "  pkg/", "  a.py", "  z.py",
        "A.md", "b.txt",
    ]


async def test_depth_controls_how_many_levels_are_shown(project: Path, ctx: ToolContext) -> None:
    touch(project, "a/b/c/d.txt")
    assert await listing(ctx, depth=1) == ["a/"]
    assert await listing(ctx, depth=3) == ["a/", "  b/", "    c/"]
    assert await listing(ctx, depth=4) == ["a/", "  b/", "    c/", "      d.txt"]


async def test_path_lists_a_subfolder(project: Path, ctx: ToolContext) -> None:
    touch(project, "top.txt", "src/pkg/m.py", "src/a.py")
    r = await create().execute({"path": "src"}, ctx)
    assert r.content.splitlines() == ["src: 3 entries, 2 levels deep:", "pkg/", "  m.py", "a.py"]


async def test_gitignored_and_git_folder_are_left_out(project: Path, ctx: ToolContext) -> None:
    touch(project, ".gitignore", "build/out.o", "keep.py", "debug.log", ".git/HEAD")
    (project / ".gitignore").write_text("build/\n*.log\n")
    assert await listing(ctx, include_hidden=True) == [".gitignore", "keep.py"]


async def test_hidden_names_only_on_request(project: Path, ctx: ToolContext) -> None:
    touch(project, ".env", ".config/app.toml", "main.py")
    assert await listing(ctx) == ["main.py"]
    assert await listing(ctx, include_hidden=True) == [".config/", "  app.toml", ".env",
                                                       "main.py"]


async def test_symlinks_are_marked_and_not_entered(project: Path, ctx: ToolContext,
                                                   tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    touch(outside, "secret.txt")
    touch(project, "real.txt")
    os.symlink(outside, project / "link")
    assert await listing(ctx) == ["link@", "real.txt"]


async def test_control_characters_in_names_are_escaped(project: Path, ctx: ToolContext) -> None:
    touch(project, "a\nb.txt")
    lines = await listing(ctx)
    assert lines == ["a⟦LF⟧b.txt"]


async def test_cap_keeps_shallow_entries_and_says_what_is_missing(
        project: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(list_directory, "MAX_ENTRIES", 4)
    touch(project, "a.txt", "b.txt", "sub/1.txt", "sub/2.txt", "sub/3.txt")
    r = await create().execute({}, ctx)
    lines = r.content.splitlines()
    # The three top-level entries are kept whole; one of sub's three children fits.
    assert lines[1] == "sub/"
    assert lines[3] == "  [… 2 more entries here not shown]"
    assert lines[4:6] == ["a.txt", "b.txt"]
    assert "[Showing 4 of 6 entries" in lines[-1]


async def test_empty_folder_says_so(project: Path, ctx: ToolContext) -> None:
    r = await create().execute({}, ctx)
    assert not r.is_error and "is empty" in r.content


@pytest.mark.parametrize("args, fragment", [
    ({"path": "missing"}, "missing does not exist"),
    ({"path": "f.txt"}, "is a file, not a folder; use read_file"),
    ({"depth": 0}, "depth: must be at least 1"),
    ({"depth": 6}, "depth: must be at most 5"),
    ({"path": "a\x00b"}, "NUL"),
    ({"recursive": True}, "unknown property 'recursive'"),
])
async def test_bad_calls_are_explained(project: Path, ctx: ToolContext, args: dict,
                                       fragment: str) -> None:
    touch(project, "f.txt")
    r = await create().execute(args, ctx)
    assert r.is_error and fragment in r.content, r.content


def test_spec_is_a_read_only_tool_whose_subject_is_the_resolved_folder(project: Path) -> None:
    spec = create().spec
    assert spec.category is ToolCategory.READ_ONLY and spec.risk is RiskLevel.LOW
    assert spec.default_enabled and [r.decision for r in spec.default_rules] == ["allow"]
    assert spec.subject_kind == "path"
    assert spec.subjects({}, project) == [str(project.resolve())]
    assert spec.subjects({"path": "src/../doc"}, project) == [str(project.resolve() / "doc")]
    assert spec.input_schema == ListDirectoryParams.json_schema()
    assert spec.params is ListDirectoryParams
