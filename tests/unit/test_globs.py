"""The one glob dialect (app.core.globs): the file tools and the permission rules agree on it.

Each table row is checked three ways: the dialect itself, a permission path pattern, and, end to
end, glob_search's results next to the permission service's decisions on the same tree. The
property test holds the dialect to git's wildmatch (as pathspec implements it) where the two
overlap, and the permission patterns to the dialect everywhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.globs import (
    compile_glob,
    escape_glob,
    gitignore_style_matcher,
    glob_to_regex,
    has_glob_magic,
)
from app.core.permissions.patterns import compile_path_pattern
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import ToolPermissionService
from app.core.tools.base import ToolContext
from app.core.tools.builtin.glob_search import create as create_glob

# (pattern, path, matches). Every path is a file of the tree the end-to-end test builds, or a
# folder on the way to one (``src``, ``src/deep``).
TABLE: list[tuple[str, str, bool]] = [
    ("*.py", "a.py", True),
    ("*.py", "src/a.py", False),               # `*` stays in one folder
    ("src/*", "src/a.py", True),
    ("src/*", "src/deep", True),
    ("src/*", "src/deep/c.py", False),
    ("src/*", "src", False),
    ("src/**", "src/a.py", True),
    ("src/**", "src/deep/c.py", True),          # `**` crosses folders
    ("src/**", "src", True),                    # the decision: dir itself too (deny rules)
    ("src/**", "srcx/a.py", False),
    ("**/*.py", "a.py", True),                  # `**/` is zero or more folders
    ("**/*.py", "src/deep/c.py", True),
    ("src/**/c.py", "src/c.py", True),
    ("src/**/c.py", "src/deep/c.py", True),
    ("src/**/c.py", "srcx/c.py", False),
    ("src**", "src", True),                     # not a whole component: one `*`
    ("src**", "src/a.py", False),
    ("**", "src/deep/c.py", True),
    ("a?.txt", "ab.txt", True),
    ("a?.txt", "a.py", False),
    ("[ab]b.txt", "ab.txt", True),
    ("[!a]b.txt", "bb.txt", True),
    ("[!a]b.txt", "ab.txt", False),
    ("*.{py,txt}", "a.py", True),
    ("*.{py,txt}", "ab.txt", True),
    ("*.{py,txt}", "notes.md", False),
    ("build[*]/x", "build*/x", True),            # `[*]`: the escape idiom is a class
    ("build[*]/x", "buildy/x", False),
    ("lit[[]1]/f", "lit[1]/f", True),
    ("lit[[]1]/f", "lit1/f", False),
    ("lit[1]/f", "lit1/f", True),
    ("q\\?", "q?", True),
    ("q\\?", "qx", False),
]
TREE_FILES = sorted({path for _, path, _ in TABLE} - {"src", "src/deep"})


@pytest.mark.parametrize("pattern, path, expected", TABLE)
def test_dialect_and_permission_patterns_give_the_table(pattern, path, expected):
    assert (compile_glob(pattern).fullmatch(path) is not None) is expected
    assert bool(compile_path_pattern(pattern)(path)) is expected


@pytest.fixture
def tree(project: Path) -> list[str]:
    """Every table path made real; returns all entries, folders included, relative."""
    entries: set[str] = set()
    for rel in TREE_FILES:
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(rel)
        parts = rel.split("/")
        entries.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return sorted(entries)


async def _glob_search(project: Path, pattern: str) -> set[str]:
    result = await create_glob().execute({"pattern": pattern, "max_results": 5000},
                                         ToolContext(project_root=project))
    assert not result.is_error, result.content
    if result.content.startswith("No files match"):
        return set()
    return {line.rstrip("/") for line in result.content.splitlines()[1:]
            if not line.startswith("[")}


@pytest.mark.parametrize("pattern", sorted({pattern for pattern, _, _ in TABLE}))
async def test_glob_search_finds_exactly_what_a_rule_with_the_pattern_allows(
        db, project: Path, tree: list[str], pattern: str):
    service = ToolPermissionService(db, project_root=project)
    service.rules.replace_all([PermissionRule(decision="allow", tool_name="read_file",
                                              input_pattern=pattern)])
    allowed = {rel for rel in tree
               if service.decide("builtin", "read_file", {"path": rel}).kind == "allow"}
    if pattern.endswith("/**"):
        # A rule on `dir/**` also covers the folder itself; a search for it lists what is in it.
        allowed.discard(pattern[:-3])
    found = await _glob_search(project, pattern)
    assert found == allowed
    # And both are what the table says, for the rows about this pattern.
    for row_pattern, path, expected in TABLE:
        if row_pattern == pattern and not (pattern.endswith("/**") and path == pattern[:-3]):
            assert (path in found) is expected, path


# -- the dialect against git's wildmatch --------------------------------------------------------

_COMPONENT_PIECES = ["a", "b", "x", "*", "?", "[ab]", "a*", "*b", "a**b"]
_components = st.one_of(
    st.just("**"),
    st.lists(st.sampled_from(_COMPONENT_PIECES), min_size=1, max_size=3).map("".join))
_patterns = st.lists(_components, min_size=1, max_size=4).map("/".join)
_paths = st.lists(st.text("abx", min_size=1, max_size=3), min_size=1, max_size=4).map("/".join)


def _gitwildmatch(pattern: str, path: str) -> bool:
    # A leading `/` anchors the pattern to the root, as our patterns always are.
    return pathspec.GitIgnoreSpec.from_lines(["/" + pattern]).match_file(path)


@settings(max_examples=400)
@given(_patterns, _paths)
def test_dialect_is_gitwildmatch_without_the_gitignore_extras(pattern, path):
    ours = compile_glob(pattern)
    # A gitignore line also matches everything inside a folder it matches; a glob does not.
    parts = path.split("/")
    self_or_ancestor = any(ours.fullmatch("/".join(parts[:i])) is not None
                           for i in range(1, len(parts) + 1))
    expected = _gitwildmatch(pattern, path)
    if pattern.endswith("/**") and len(pattern) > 3:
        # Our one deliberate difference: `dir/**` also matches `dir` (so a deny rule on a
        # folder's contents covers the folder); as a gitignore line that is just `dir`.
        expected = expected or _gitwildmatch(pattern[:-3], path)
    assert expected == self_or_ancestor
    # The permission patterns are the same dialect, not a look-alike.
    assert bool(compile_path_pattern(pattern)(path)) == (ours.fullmatch(path) is not None)


@settings(max_examples=300)
@given(st.text(st.sampled_from("ab/*?[]{},\\!^-~"), max_size=12))
def test_escaped_text_is_literal_in_both_users(text):
    pattern = escape_glob(text)
    assert compile_glob(pattern).fullmatch(text) is not None
    if not text.startswith("~"):  # a leading `~` is the home folder in a permission pattern
        assert compile_path_pattern(pattern)(text)
    if text:
        assert compile_glob(pattern).fullmatch(text + "a") is None


# -- details ----------------------------------------------------------------------------------


def test_home_is_expanded_literally_in_permission_patterns(monkeypatch, tmp_path: Path):
    home = tmp_path / "h[1]*"
    monkeypatch.setenv("HOME", str(home))
    compile_path_pattern.cache_clear()
    try:
        matches = compile_path_pattern("~/notes/*")
        assert matches(f"{home}/notes/a.md")
        assert not matches(f"{tmp_path}/h1x/notes/a.md")  # `[1]` and `*` not read as a glob
    finally:
        compile_path_pattern.cache_clear()


def test_a_run_of_stars_is_one_regex_piece():
    # Repeated `[^/]*` pieces backtrack polynomially on a failing match.
    assert glob_to_regex("a***b") == glob_to_regex("a*b")
    assert glob_to_regex("x/***/y") == glob_to_regex("x/**/y")


def test_classes_never_match_the_separator():
    assert compile_glob("a[+-0]b").fullmatch("a/b") is None  # `/` lies in the range + … 0
    assert compile_glob("a[+-0]b").fullmatch("a.b") is not None
    assert compile_glob("a[!x]b").fullmatch("a/b") is None


def test_unclosed_brackets_and_braces_are_literal():
    assert compile_glob("[x").fullmatch("[x") is not None
    assert compile_glob("{a,b").fullmatch("{a,b") is not None
    assert compile_glob("a,b}").fullmatch("a,b}") is not None


def test_glob_magic_is_what_the_dialect_reads_specially():
    assert all(has_glob_magic(p) for p in ("*", "a?", "[a]", "{a,b}"))
    assert not has_glob_magic("src/a.py")
    assert not has_glob_magic("a\\b")  # a backslash alone keeps a path literal


@pytest.mark.parametrize("pattern, rel, is_dir, expected", [
    ("*.py", "deep/a.py", False, True),      # no '/': a name at any depth
    ("src/*.py", "x/src/a.py", False, False),  # with '/': from the root
    ("/a.py", "a.py", False, True),
    ("/a.py", "x/a.py", False, False),
    ("build/", "build", True, True),         # trailing '/': folders only
    ("build/", "build", False, False),
])
def test_gitignore_style_matcher(pattern, rel, is_dir, expected):
    assert gitignore_style_matcher(pattern)(rel, is_dir) is expected


def test_the_translation_is_a_plain_regex():
    # glob_search and the permission service only ever call fullmatch on it.
    assert re.fullmatch(glob_to_regex("src/**/*.py"), "src/a/b.py")
