"""File names in tool results are printed escaped: a name with a newline, an ANSI escape or a
bidi override reads as the one name it is, in the built-ins and in the CLI provider's variants."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.core.tools.base import ToolContext, ToolResult
from app.core.tools.builtin.glob_search import GlobSearchTool, visible_name
from app.core.tools.builtin.grep_search import GrepSearchTool
from app.core.tools.builtin.read_file import ReadFileTool
from app.core.tools.default_registry import cli_provider

RG = shutil.which("rg")
FD = shutil.which("fd") or shutil.which("fdfind")
MISSING = "tebiki-no-such-program"

# name on disk → how a result must print it
NAMES = {
    "a\nb.py": "a⟦LF⟧b.py",
    "evil\u202etxt.py": "evil⟦U+202E⟧txt.py",
    "esc\x1b[31mred.py": "esc⟦ESC⟧[31mred.py",
    "zw\u200bsp.py": "zw⟦U+200B⟧sp.py",
    "tab\tname.py": "tab⟦TAB⟧name.py",
    "cr\rname.py": "cr⟦CR⟧name.py",
    "plain.py": "plain.py",
}
RAW = ("\u202e", "\u200b", "\x1b", "\r", "\t")


@pytest.fixture
def tree(project: Path) -> Path:
    # A git work tree, so the CLI provider's glob runs on fd even when fd is older than 8.7.
    (project / ".git").mkdir()
    for name in NAMES:
        (project / name).write_text("needle here\nnothing\nneedle again\n", encoding="utf-8")
    return project


def _assert_escaped(result: ToolResult, expected_lines: list[str]) -> None:
    assert not result.is_error, result.content
    for raw in RAW:
        assert raw not in result.content
    lines = result.content.splitlines()
    for line in expected_lines:
        assert line in lines, (line, lines)


def test_visible_name_marks_what_make_visible_keeps_as_text() -> None:
    for name, shown in NAMES.items():
        assert visible_name(name) == shown
    assert visible_name("sub dir/ünïcödé.py") == "sub dir/ünïcödé.py"


async def _glob_tools() -> list[object]:
    tools: list[object] = [GlobSearchTool()]
    if FD is not None:
        (cli,) = cli_provider({"rg": [MISSING], "fd": [FD]}).tools()
        tools.append(cli)
    return tools


async def test_glob_search_prints_each_name_on_one_escaped_line(tree: Path) -> None:
    ctx = ToolContext(project_root=tree)
    for tool in await _glob_tools():
        result = await tool.execute({"pattern": "*.py"}, ctx)  # type: ignore[attr-defined]
        _assert_escaped(result, list(NAMES.values()))
        # One header line, then one line per file: no name split into two "files".
        assert len(result.content.splitlines()) == 1 + len(NAMES), (tool, result.content)


async def test_glob_search_plain_path_and_base_dir_are_escaped(project: Path) -> None:
    folder = project / "dir\u202eX"
    folder.mkdir()
    (folder / "f\nile.txt").write_text("x")
    ctx = ToolContext(project_root=project)
    result = await GlobSearchTool().execute({"pattern": "f\nile.txt", "base_dir": str(folder)},
                                            ctx)
    _assert_escaped(result, ["dir⟦U+202E⟧X/f⟦LF⟧ile.txt"])
    result = await GlobSearchTool().execute({"pattern": "*", "base_dir": "dir\u202eX"}, ctx)
    assert "under dir⟦U+202E⟧X" in result.content
    _assert_escaped(result, ["dir⟦U+202E⟧X/f⟦LF⟧ile.txt"])


def _grep_tools() -> list[tuple[str, object, dict]]:
    tools: list[tuple[str, object, dict]] = [("python", GrepSearchTool(), {"use_rg": False})]
    if RG is not None:
        tools.append(("rg", GrepSearchTool(), {"use_rg": True}))
        (cli,) = cli_provider({"rg": [RG], "fd": [MISSING]}).tools()
        tools.append(("cli", cli, {}))
    return tools


@pytest.mark.parametrize("mode", ["files_with_matches", "count", "content"])
async def test_grep_search_escapes_names_in_every_mode_and_backend(tree: Path,
                                                                   mode: str) -> None:
    for label, tool, cfg in _grep_tools():
        ctx = ToolContext(project_root=tree, tool_config={"grep_search": cfg})
        result = await tool.execute(  # type: ignore[attr-defined]
            {"pattern": "needle", "output_mode": mode}, ctx)
        if mode == "files_with_matches":
            expected = list(NAMES.values())
        elif mode == "count":  # two matches in each file, counted for the right name
            expected = [f"{shown}:2" for shown in NAMES.values()]
        else:
            expected = [f"{shown}:1:needle here" for shown in NAMES.values()]
        _assert_escaped(result, expected)
        assert "a\nb.py" not in result.content, label


async def test_grep_search_on_one_oddly_named_file(tree: Path) -> None:
    for _label, tool, cfg in _grep_tools():
        ctx = ToolContext(project_root=tree, tool_config={"grep_search": cfg})
        result = await tool.execute(  # type: ignore[attr-defined]
            {"pattern": "needle", "path": "evil\u202etxt.py", "output_mode": "count"}, ctx)
        _assert_escaped(result, ["evil⟦U+202E⟧txt.py:2"])


async def test_read_file_names_the_file_escaped(tree: Path) -> None:
    ctx = ToolContext(project_root=tree)
    tool = ReadFileTool()
    missing = await tool.execute({"path": "evil\u202etxt.pyy"}, ctx)
    assert missing.is_error
    assert "File not found: evil⟦U+202E⟧txt.pyy." in missing.content
    assert "Did you mean: evil⟦U+202E⟧txt.py" in missing.content
    assert "\u202e" not in missing.content
    (tree / "sub\ndir").mkdir()
    folder = await tool.execute({"path": "sub\ndir"}, ctx)
    assert folder.is_error and folder.content.startswith("sub⟦LF⟧dir is a directory")
    assert "\n" not in folder.content
    (tree / "big\x1b[2J.py").write_text("x" * 100)
    big = await tool.execute({"path": "big\x1b[2J.py"}, ctx.__class__(
        project_root=tree, tool_config={"read_file": {"max_file_bytes": 10}}))
    assert big.is_error and big.content.startswith("big⟦ESC⟧[2J.py is 100 bytes")
    assert "\x1b" not in big.content
