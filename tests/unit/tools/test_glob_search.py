"""glob_search: pattern semantics, .gitignore, ordering, truncation and errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.globs import glob_to_regex
from app.core.tools.base import RiskLevel, ToolCategory, ToolContext
from app.core.tools.builtin.glob_search import create
from app.core.tools.glob_listing import split_pattern


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(project_root=project)


def touch(root: Path, rel: str, mtime: int | None = None) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(rel)
    if mtime is not None:
        os.utime(p, (mtime, mtime))
    return p


async def glob(ctx: ToolContext, **args: object) -> list[str]:
    r = await create().execute(args, ctx)
    assert not r.is_error, r.content
    return [ln for ln in r.content.splitlines()[1:] if not ln.startswith("[")]


async def test_double_star_crosses_folders_single_star_does_not(project: Path,
                                                                ctx: ToolContext) -> None:
    for rel in ("a.py", "src/b.py", "src/deep/c.py", "src/d.txt"):
        touch(project, rel)
    assert sorted(await glob(ctx, pattern="**/*.py")) == ["a.py", "src/b.py", "src/deep/c.py"]
    assert await glob(ctx, pattern="*.py") == ["a.py"]
    assert sorted(await glob(ctx, pattern="src/*")) == ["src/b.py", "src/d.txt", "src/deep/"]
    assert await glob(ctx, pattern="src/**/c.py") == ["src/deep/c.py"]


async def test_classes_braces_and_question_mark(project: Path, ctx: ToolContext) -> None:
    for rel in ("a1.ts", "a2.tsx", "b1.js", "ab.ts"):
        touch(project, rel)
    assert sorted(await glob(ctx, pattern="*.{ts,tsx}")) == ["a1.ts", "a2.tsx", "ab.ts"]
    assert sorted(await glob(ctx, pattern="a[0-9].*")) == ["a1.ts", "a2.tsx"]
    assert sorted(await glob(ctx, pattern="[!a]?.js")) == ["b1.js"]
    assert sorted(await glob(ctx, pattern="a?.ts")) == ["a1.ts", "ab.ts"]


async def test_newest_first(project: Path, ctx: ToolContext) -> None:
    touch(project, "old.md", 1_000_000)
    touch(project, "new.md", 3_000_000)
    touch(project, "mid.md", 2_000_000)
    assert await glob(ctx, pattern="*.md") == ["new.md", "mid.md", "old.md"]


async def test_max_results_and_truncation_marker(project: Path, ctx: ToolContext) -> None:
    for i in range(12):
        touch(project, f"f{i:02d}.txt", 1_000_000 + i)
    r = await create().execute({"pattern": "*.txt", "max_results": 5}, ctx)
    lines = r.content.splitlines()
    assert lines[0].startswith("Found 12 paths")
    assert lines[1:6] == ["f11.txt", "f10.txt", "f09.txt", "f08.txt", "f07.txt"]
    assert "[Showing 5 of 12 paths." in lines[6] and "max_results" in lines[6]


async def test_default_max_results_is_100(project: Path, ctx: ToolContext) -> None:
    for i in range(105):
        touch(project, f"f{i:03d}.txt")
    r = await create().execute({"pattern": "*.txt"}, ctx)
    assert "[Showing 100 of 105 paths." in r.content


async def test_gitignore_is_honoured(project: Path, ctx: ToolContext) -> None:
    (project / ".gitignore").write_text("build/\n*.log\n!keep.log\n/top_only.txt\n")
    for rel in ("build/x.py", "a.log", "keep.log", "top_only.txt", "sub/top_only.txt",
                "sub/b.py", "sub/.gitignore"):
        touch(project, rel)
    (project / "sub" / ".gitignore").write_text("b.py\n")
    found = sorted(await glob(ctx, pattern="**/*"))
    assert found == [".gitignore", "keep.log", "sub/", "sub/.gitignore", "sub/top_only.txt"]


async def test_parent_gitignore_applies_until_the_repo_root(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    repo = outer / "repo"
    (repo / ".git").mkdir(parents=True)
    (outer / ".gitignore").write_text("*.md\n")  # above the repository: not in force
    (repo / ".gitignore").write_text("*.tmp\n")
    touch(repo, "pkg/a.md")
    touch(repo, "pkg/b.tmp")
    ctx = ToolContext(project_root=repo)
    assert await glob(ctx, pattern="*", base_dir="pkg") == ["pkg/a.md"]


async def test_git_folder_is_skipped_hidden_files_are_not(project: Path,
                                                          ctx: ToolContext) -> None:
    touch(project, ".git/config")
    touch(project, ".github/workflows/ci.yml")
    assert await glob(ctx, pattern="**/*.yml") == [".github/workflows/ci.yml"]
    assert await glob(ctx, pattern="**/config") == []


async def test_base_dir_and_literal_prefix_give_working_dir_relative_paths(
        project: Path, ctx: ToolContext) -> None:
    touch(project, "src/app/main.py")
    assert await glob(ctx, pattern="*.py", base_dir="src/app") == ["src/app/main.py"]
    assert await glob(ctx, pattern="src/app/*.py") == ["src/app/main.py"]


async def test_absolute_pattern_outside_working_dir(project: Path, tmp_path: Path,
                                                    ctx: ToolContext) -> None:
    touch(tmp_path, "other/x.cfg")
    assert await glob(ctx, pattern=str(tmp_path / "other" / "*.cfg")) == [
        str(tmp_path / "other" / "x.cfg")]


async def test_symlinked_folder_is_listed_not_entered(project: Path, tmp_path: Path,
                                                      ctx: ToolContext) -> None:
    touch(tmp_path, "outside/secret.py")
    os.symlink(tmp_path / "outside", project / "link")
    assert await glob(ctx, pattern="**/*.py") == []
    assert await glob(ctx, pattern="*") == ["link"]


async def test_literal_path(project: Path, ctx: ToolContext) -> None:
    touch(project, "README.md")
    assert await glob(ctx, pattern="README.md") == ["README.md"]
    r = await create().execute({"pattern": "NOPE.md"}, ctx)
    assert not r.is_error and "does not exist" in r.content


async def test_no_match_message(project: Path, ctx: ToolContext) -> None:
    r = await create().execute({"pattern": "**/*.zig"}, ctx)
    assert not r.is_error and r.content.startswith("No files match '**/*.zig'")
    assert ".gitignore" in r.content


@pytest.mark.parametrize("args, fragment", [
    ({}, "- pattern: required"),
    ({"pattern": ""}, "pattern: must be at least 1 characters long"),
    ({"pattern": "*", "base_dir": "missing"}, "does not exist"),
    ({"pattern": "*", "base_dir": "file.txt"}, "not a folder"),
    ({"pattern": "*", "max_results": 0}, "at least 1"),
    ({"pattern": "a\x00*"}, "NUL"),
    ({"pattern": "*", "base_dir": "a\x00"}, "NUL"),
    ({"pattern": "*", "other": 1}, "unknown property"),
])
async def test_errors(project: Path, ctx: ToolContext, args: dict, fragment: str) -> None:
    touch(project, "file.txt")
    r = await create().execute(args, ctx)
    assert r.is_error and fragment in r.content


def test_glob_translation() -> None:
    import re

    def m(pattern: str, path: str) -> bool:
        return re.fullmatch(glob_to_regex(pattern), path) is not None

    assert m("**/*.py", "a.py") and m("**/*.py", "x/y/a.py")
    assert not m("*.py", "x/a.py")
    assert m("src/**", "src/a/b") and not m("src/**", "srcx/a")
    assert m("a/**/b", "a/b") and m("a/**/b", "a/x/y/b")
    assert m("{a,b{c,d}}.txt", "bd.txt") and not m("{a,b}.txt", "c.txt")
    assert m("[!x]", "y") and not m("[!x]", "/")
    assert m("\\*", "*") and not m("\\*", "a")
    assert m("[unclosed", "[unclosed")


def test_split_pattern(project: Path) -> None:
    assert split_pattern("src/**/*.py", None, project) == (str(project / "src"), "**/*.py")
    assert split_pattern("/etc/*.conf", None, project) == ("/etc", "*.conf")
    assert split_pattern("*.md", "docs", project) == (str(project / "docs"), "*.md")


def test_spec_and_subjects(project: Path) -> None:
    spec = create().spec
    assert spec.category is ToolCategory.READ_ONLY and spec.risk is RiskLevel.LOW
    assert spec.subject_kind == "path" and spec.input_schema["additionalProperties"] is False
    assert spec.subjects({"pattern": "**/*.py"}, project) == [str(project)]
    assert spec.subjects({"pattern": "*.py", "base_dir": "src/.."}, project) == [str(project)]
    assert spec.subjects({"pattern": "/etc/*.conf"}, project) == ["/etc"]
