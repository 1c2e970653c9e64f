""""Always allow" suggestions never allow more than the approved call's own program/folder.

Every check goes through a real rule table and ``ToolPermissionService.decide``, so what is
tested is what a remembered rule would actually allow.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.permissions.patterns import (
    compile_path_pattern,
    compile_text_pattern,
    escape_pattern,
    has_wildcard,
)
from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import ToolPermissionService
from app.core.permissions.suggestions import (
    SUBCOMMAND_PROGRAMS,
    RuleSuggestion,
    command_prefix,
    suggest_allow_rules,
)
from app.core.tools.base import RiskLevel
from tests.unit.permissions.helpers import fake_registry, spec

PROPERTY = settings(derandomize=True, deadline=None, max_examples=120,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    folder = (tmp_path / "home").resolve()
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def service(db, project, home):
    permissions = ToolPermissionService(db, registry=fake_registry(), project_root=project)
    RuleRepository(db).replace_all([])
    yield permissions
    permissions.close()


def _suggest(service, tool: str, tool_input: dict, project: Path,
             with_decision: bool = True) -> list[RuleSuggestion]:
    tool_spec = service.registry.get(tool).spec
    decision = service.decide("builtin", tool, tool_input) if with_decision else None
    return suggest_allow_rules("builtin", tool, tool_input, tool_spec, project, decision)


def _allows(service, rules, tool: str, tool_input: dict) -> bool:
    """Whether a table holding only ``rules`` auto-approves the call."""
    service.rules.replace_all(list(rules))
    return service.decide("builtin", tool, tool_input).kind == "allow"


def _patterns(suggestion: RuleSuggestion) -> list[str | None]:
    return [rule.input_pattern for rule in suggestion.rules]


# -- escapes in patterns -----------------------------------------------------------------------


@pytest.mark.parametrize("text", ["build*", "a[*]b", "x[[]", "[", "*", "**/x", "ls *.py",
                                  "a?b", "[abc]", "~tmp"])
def test_escaped_text_matches_only_itself(text):
    pattern = escape_pattern(text)
    assert not has_wildcard(pattern)
    assert compile_text_pattern(pattern)(text)
    assert compile_path_pattern(pattern)(text)
    for other in (text + "x", "x" + text, text.replace("*", "x"), text.replace("*", "")):
        if other != text:
            assert not compile_text_pattern(pattern)(other)
            assert not compile_path_pattern(pattern)(other)


@pytest.mark.parametrize("pattern, subject, expected", [
    # Patterns without the two escape sequences keep their meaning: only `*` is special.
    ("a[b]*", "a[b]cd", True),
    ("a[b]*", "abcd", False),
    ("x?", "x?", True),
    ("x?", "xy", False),
    ("[abc]", "[abc]", True),
    ("[abc]", "a", False),
    ("git status*", "git status -s", True),
    # The escapes: `[*]` is a literal star, `[[]` a literal bracket.
    ("build[*]", "build*", True),
    ("build[*]", "buildx", False),
    ("[[]*]", "[anything]", True),
])
def test_text_pattern_meaning(pattern, subject, expected):
    assert bool(compile_text_pattern(pattern)(subject)) is expected


@pytest.mark.parametrize("pattern, path, expected", [
    ("doc/**", "doc/a/b.md", True),
    # The shared glob dialect (app.core.globs): `doc/**` matches `doc` itself too, and
    # `[b]` is a character class, as in the file tools' globs.
    ("doc/**", "doc", True),
    ("**/x", "x", True),
    ("src/*.py", "src/a.py", True),
    ("src/*.py", "src/a/b.py", False),
    ("b[*]/*", "b*/f", True),
    ("b[*]/*", "bx/f", False),
    ("b[*]/*", "b*/sub/f", False),
    ("a[b]/*", "ab/f", True),
    ("a[b]/*", "a[b]/f", False),
    ("a[[]b]/*", "a[b]/f", True),
    ("x?", "xy", True),
    ("x[?]", "xy", False),
])
def test_path_pattern_meaning(pattern, path, expected):
    assert bool(compile_path_pattern(pattern)(path)) is expected


# -- shell commands ---------------------------------------------------------------------------


def test_git_log_offers_exact_and_same_subcommand(service, project):
    suggestions = _suggest(service, "shell", {"command": "git log -p"}, project)
    assert [_patterns(s) for s in suggestions] == [["git log -p"], ["git log", "git log *"]]
    broad = suggestions[1]
    assert "`git log` with any arguments" in broad.also_matches
    assert suggestions[0].also_matches.startswith("Nothing else")
    for command in ("git log", "git log -p", "git log --oneline -5"):
        assert _allows(service, broad.rules, "shell", {"command": command}), command
    for command in ("git reset --hard", "git logout", "git", "gitk log", "git -C x log"):
        assert not _allows(service, broad.rules, "shell", {"command": command}), command


def test_no_pattern_glues_a_prefix_to_a_star(service, project):
    suggestions = _suggest(service, "shell", {"command": "ls -la"}, project)
    patterns = [p for s in suggestions for p in _patterns(s)]
    assert patterns == ["ls -la", "ls", "ls *"]
    for suggestion in suggestions:
        assert not _allows(service, suggestion.rules, "shell", {"command": "lsof -i"})
        assert not _allows(service, suggestion.rules, "shell", {"command": "lsblk"})


@pytest.mark.parametrize("command", [
    "git -C /elsewhere log",      # options before the subcommand change what runs
    "git",                        # no subcommand to keep
    "sudo ls",
    "bash -c ls",
    "env A=1 ls",
    "xargs rm",
    "python3.11 script.py",
    "rm -rf build",
    "/usr/bin/rm -rf build",
    "mkfs.ext4 /dev/sda",
])
def test_only_the_exact_command_for_risky_shapes(service, project, command):
    suggestions = _suggest(service, "shell", {"command": command}, project)
    assert [_patterns(s) for s in suggestions] == [[command]]
    assert command_prefix(command) is None


def test_compound_command_gets_one_rule_per_open_part(service, project):
    service.rules.add(PermissionRule(decision="deny", tool_name="shell", input_pattern="rm *"))
    service.rules.add(PermissionRule(decision="allow", tool_name="shell", input_pattern="pwd"))
    call = {"command": "git status && rm -rf x && pwd && ls -la | wc -l"}
    suggestions = _suggest(service, "shell", call, project)
    assert len(suggestions) == 1  # no "every shell call" for a high-risk tool
    (together,) = suggestions
    assert together.label == "Always allow these 3 commands"
    assert together.items == ("git status", "ls -la", "wc -l")
    assert _patterns(together) == ["git status", "ls -la", "wc -l"]
    assert together.also_matches == "Nothing else: only exactly these 3."
    # Remembered next to the existing rules, the call's open parts are allowed; rm stays denied.
    rules = [*service.rules.list(), *together.rules]
    assert _allows(service, rules, "shell", {"command": "git status && pwd && ls -la | wc -l"})
    assert not _allows(service, rules, "shell", call)


def test_not_understood_call_gets_no_rule(service, project):
    assert _suggest(service, "shell", {"command": "ls $(rm -rf x)"}, project) == []


def test_control_characters_make_no_rule(service, project):
    """A rule cannot hold an escape character, so no exact rule is offered (rather than one
    that fails to save after the person ticked it); the program-wide one can still be."""
    suggestions = _suggest(service, "shell", {"command": "echo \x1b[31mred"}, project)
    assert [_patterns(s) for s in suggestions] == [["echo", "echo *"]]


def test_whole_tool_only_for_low_risk_or_subjectless_tools(project):
    registry = fake_registry()
    low = spec("lister", subjects_fn=lambda i, _w: [i["q"]], risk=RiskLevel.LOW)
    assert [s.label for s in suggest_allow_rules("builtin", "lister", {"q": "x"}, low,
                                                 project)] == [
        "Always allow lister for exactly `x`", "Always allow lister for `x` with any arguments",
        "Always allow every lister call"]
    git_status = registry.get("git_status").spec
    (only,) = suggest_allow_rules("builtin", "git_status", {}, git_status, project)
    assert only.rule.input_pattern is None
    assert only.also_matches == "Also matches: every git_status call, whatever its input."
    assert suggest_allow_rules("builtin", "mcp_tool", {}, None, project)[0].rules[0] \
        .input_pattern is None


def test_web_fetch_host_suggestion_is_canonical(db, project):
    permissions = ToolPermissionService(db, project_root=project)
    web_fetch = permissions.registry.get("web_fetch").spec
    suggestions = suggest_allow_rules("builtin", "web_fetch",
                                      {"url": "https://WWW.Example.COM./page"}, web_fetch,
                                      project)
    assert _patterns(suggestions[0]) == ["www.example.com"]
    assert "not its subdomains" in suggestions[0].also_matches
    permissions.close()


# -- paths ------------------------------------------------------------------------------------


def test_file_in_project_offers_file_then_its_folder(service, project):
    suggestions = _suggest(service, "write_file", {"path": "doc/x.md"}, project)
    assert [_patterns(s) for s in suggestions] == [["doc/x.md"], ["doc/*"]]
    assert "directly in `doc/`" in suggestions[1].also_matches


def test_glob_characters_in_folder_names_stay_literal(service, project):
    suggestions = _suggest(service, "write_file", {"path": "build*/a[1]/x?.md"}, project)
    # `?` is a wildcard of the path dialect, so it is escaped like `*` and `[`.
    assert [_patterns(s) for s in suggestions] == [["build[*]/a[[]1]/x[?].md"],
                                                    ["build[*]/a[[]1]/*"]]
    assert not _allows(service, suggestions[0].rules, "write_file",
                       {"path": "build*/a[1]/xy.md"})
    folder = suggestions[1].rules
    assert _allows(service, folder, "write_file", {"path": "build*/a[1]/other"})
    for other in ("buildX/a[1]/x.md", "build/a1/x.md", "build*/a[1]/deeper/x.md",
                  "build*/ab/x.md"):
        assert not _allows(service, folder, "write_file", {"path": other}), other


def test_file_directly_in_project(service, project):
    suggestions = _suggest(service, "write_file", {"path": "notes.txt"}, project)
    assert [_patterns(s) for s in suggestions] == [["notes.txt"], ["*"]]


def test_leading_tilde_folder_is_not_read_as_home(service, project, home):
    suggestions = _suggest(service, "write_file", {"path": "~stuff/x"}, project)
    assert _patterns(suggestions[1]) == [f"{escape_pattern(str(project))}/~stuff/*"]
    assert not _allows(service, suggestions[1].rules, "write_file",
                       {"path": str(home / "x")})


@pytest.mark.parametrize("where", ["parent", "root", "home", "project"])
def test_never_a_folder_that_is_an_ancestor_root_or_home(service, project, home, where):
    path = {"parent": project.parent / "x.txt", "root": Path("/x.txt"),
            "home": home / ".bashrc", "project": project}[where]
    suggestions = _suggest(service, "write_file", {"path": str(path)}, project)
    assert [_patterns(s) for s in suggestions] == [[escape_pattern(str(path))]]


def test_outside_the_project_only_the_file_or_its_folder(service, project):
    suggestions = _suggest(service, "write_file", {"path": "/etc/hosts"}, project)
    assert [_patterns(s) for s in suggestions] == [["/etc/hosts"], ["/etc/*"]]
    assert not _allows(service, suggestions[1].rules, "write_file",
                       {"path": "/etc/ssh/sshd_config"})


# -- properties -------------------------------------------------------------------------------

_WORD_CHARS = "abgilost-*[]?~./="
words = st.text(alphabet=_WORD_CHARS, min_size=1, max_size=6)
programs = (st.sampled_from(["git", "npm", "cargo", "/usr/bin/git", "ls", "lsof", "cat", "rm",
                             "sudo", "make", "l*", "[x]", "g*t"])
            | words)
commands = st.builds(lambda program, args: " ".join([program, *args]), programs,
                     st.lists(st.one_of(words, st.sampled_from(["log", "-p", "--all", "*"])),
                              max_size=4))


def _same_program_and_subcommand(approved: str, other: str) -> bool:
    a, b = approved.split(" "), other.split(" ")
    if a[0] != b[0]:
        return False
    if a[0].rsplit("/", 1)[-1] in SUBCOMMAND_PROGRAMS:
        return len(a) > 1 and len(b) > 1 and a[1] == b[1]
    return True


def _mutations(command: str) -> list[str]:
    first, *rest = command.split(" ")
    out = [" ".join([first + "x", *rest]), " ".join([first[:-1] or "x", *rest]),
           " ".join(["x" + first, *rest]), first + " reset --hard", first + "x"]
    if rest:
        out.append(" ".join([first, rest[0] + "x", *rest[1:]]))
        out.append(" ".join([first, "x" + rest[0], *rest[1:]]))
        out.append(f"{first} {rest[0]}x")
    return out


@PROPERTY
@given(approved=commands, data=st.data())
def test_command_suggestions_stay_within_program_and_subcommand(service, project, approved,
                                                                data):
    suggestions = _suggest(service, "shell", {"command": approved}, project,
                           with_decision=False)
    assert suggestions, approved
    others = data.draw(st.lists(commands, max_size=6)) + _mutations(approved)
    for suggestion in suggestions:
        for pattern in _patterns(suggestion):
            assert pattern is not None
            # Any wildcard stands alone as the last word: never `ls*`, never mid-word.
            assert not has_wildcard(pattern) or (pattern.endswith(" *")
                                                 and not has_wildcard(pattern[:-2]))
        assert _allows(service, suggestion.rules, "shell", {"command": approved})
        for other in others:
            if _allows(service, suggestion.rules, "shell", {"command": other}):
                assert other == approved or _same_program_and_subcommand(approved, other), \
                    (approved, other, _patterns(suggestion))


_NAME_CHARS = "ab*?[]~. -"
names = st.text(alphabet=_NAME_CHARS, min_size=1, max_size=5).filter(
    lambda n: n.strip(" ") == n and n not in (".", ".."))


def _path_strategy(project: Path, home: Path):
    roots = st.sampled_from([str(project), str(project), str(project.parent), "/", str(home),
                             "/etc"])
    return st.builds(lambda root, parts: os.path.join(root, *parts), roots,
                     st.lists(names, min_size=1, max_size=3))


@PROPERTY
@given(data=st.data())
def test_path_suggestions_stay_within_the_file_or_its_folder(service, project, home, data):
    approved = os.path.normpath(data.draw(_path_strategy(project, home)))
    folder = os.path.dirname(approved)
    suggestions = _suggest(service, "write_file", {"path": approved}, project,
                           with_decision=False)
    assert suggestions, approved
    folder_allowed = not (folder in ("/", str(home)) or str(project).startswith(folder + "/"))
    others = [os.path.normpath(p) for p in data.draw(st.lists(_path_strategy(project, home),
                                                              max_size=6))]
    others += [os.path.join(folder, "sibling"), os.path.join(folder, "sub", "deeper"),
               os.path.join(folder.replace("*", "x").replace("[", "("), "f"),
               os.path.join(os.path.dirname(folder), "other", "f"), approved + "x"]
    for suggestion in suggestions:
        assert all(rule.input_pattern for rule in suggestion.rules)
        assert _allows(service, suggestion.rules, "write_file", {"path": approved})
        for other in others:
            if _allows(service, suggestion.rules, "write_file", {"path": other}):
                assert other == approved or (folder_allowed and os.path.dirname(other) == folder
                                             ), (approved, other, _patterns(suggestion))
