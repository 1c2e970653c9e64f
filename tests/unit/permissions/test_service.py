"""ToolPermissionService semantics."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import ToolPermissionService
from tests.unit.permissions.helpers import fake_registry


@pytest.fixture
def empty_db(db):
    """A database with the first-run seed rules removed, so each test sets its own table."""
    RuleRepository(db).replace_all([])
    return db


@pytest.fixture
def service(empty_db, project: Path) -> ToolPermissionService:
    return ToolPermissionService(empty_db, registry=fake_registry(), project_root=project)


def add(service: ToolPermissionService, decision: str, **fields) -> PermissionRule:
    return service.rules.add(PermissionRule(decision=decision, **fields))  # type: ignore[arg-type]


# -- defaults ------------------------------------------------------------------------------


def test_no_rule_means_ask(service):
    decision = service.decide("builtin", "anything", {})
    assert decision.kind == "ask"
    assert decision.rule is None
    assert not service.should_auto_approve("builtin", "anything", {})


def test_first_run_seed_rules(db, project):
    from app.core.services import default_rules

    service = ToolPermissionService(db, project_root=project)
    service.rules.seed_defaults(default_rules(service.registry.specs()))  # as at every start
    assert service.decide("builtin", "read_file", {"path": "x"}).kind == "allow"
    assert service.decide("builtin", "read_file", {"path": "/etc/hostname"}).kind == "ask"
    assert service.decide("builtin", "web_fetch", {"url": "https://a.example"}).kind == "allow"
    assert service.decide("builtin", "write_file", {"path": "x", "content": ""}).kind == "ask"
    assert service.decide("builtin", "shell_exec", {"command": "ls"}).kind == "ask"
    assert service.decide("other", "read_file", {"path": "x"}).kind == "ask"


def test_seed_rules_are_written_once(fresh_data_dir):
    from app.core.store.db import open_database

    path = fresh_data_dir / "seed.sqlite3"
    db = open_database(path)
    repo = RuleRepository(db)
    seeded = repo.list()
    assert seeded
    repo.delete(seeded[0].id)
    db.close()
    db = open_database(path)
    assert len(RuleRepository(db).list()) == len(seeded) - 1
    db.close()


# -- the releio example table ------------------------------------------------------------


def test_releio_example_table(service):
    add(service, "allow", priority=100, server_id="filesystem", tool_pattern="read_*")
    add(service, "ask", priority=100, server_id="filesystem", tool_pattern="delete_*")
    add(service, "ask", priority=50, server_id="shell", tool_name="execute_command")
    add(service, "allow", priority=10, server_id="weather-server")
    add(service, "ask", priority=0)

    assert service.decide("filesystem", "read_file", {}).kind == "allow"
    assert service.decide("filesystem", "READ_dir", {}).kind == "allow"
    assert service.decide("filesystem", "delete_file", {}).kind == "ask"
    assert service.decide("filesystem", "write_file", {}).kind == "ask"
    assert service.decide("shell", "execute_command", {"c": "ls"}).kind == "ask"
    assert service.decide("weather-server", "forecast", {}).kind == "allow"
    assert service.decide("weather-server", "read_file", {}).kind == "allow"
    assert service.decide("other", "read_file", {}).kind == "ask"
    decision = service.decide("weather-server", "forecast", {})
    assert decision.rule is not None and decision.rule.server_id == "weather-server"


# -- tool matching -------------------------------------------------------------------------


def test_tool_name_is_exact_and_case_sensitive(service):
    add(service, "allow", tool_name="git_status")
    assert service.decide("builtin", "git_status", {}).kind == "allow"
    assert service.decide("builtin", "Git_Status", {}).kind == "ask"
    assert service.decide("builtin", "git_status2", {}).kind == "ask"


def test_tool_pattern_is_case_insensitive_whole_name(service):
    add(service, "allow", tool_pattern="git_*")
    assert service.decide("builtin", "git_status", {}).kind == "allow"
    assert service.decide("builtin", "GIT_COMMIT", {}).kind == "allow"
    assert service.decide("builtin", "my_git_status", {}).kind == "ask"
    assert service.decide("builtin", "git", {}).kind == "ask"


@pytest.mark.parametrize("pattern, name, expected", [
    ("a.c", "abc", "ask"),          # '.' is literal
    ("a.c", "a.c", "allow"),
    ("a+", "aaa", "ask"),            # '+' is literal
    ("a+", "a+", "allow"),
    ("x[1]", "x1", "ask"),
    ("x[1]", "x[1]", "allow"),
    ("(a|b)", "a", "ask"),
    ("^a$", "a", "ask"),
    ("a?c", "abc", "ask"),           # '?' is literal, only '*' is special
    ("*", "", "allow"),
    ("*_*", "read_file", "allow"),
    ("**x", "abx", "allow"),
    ("a\\*", "a\\anything", "allow"),
])
def test_regex_metacharacters_are_literal(service, pattern, name, expected):
    add(service, "allow", tool_pattern=pattern)
    assert service.decide("builtin", name, {}).kind == expected


def test_server_scoping(service):
    add(service, "allow", server_id="github", tool_pattern="*")
    assert service.decide("github", "create_issue", {}).kind == "allow"
    assert service.decide("gitlab", "create_issue", {}).kind == "ask"
    assert service.decide("GitHub", "create_issue", {}).kind == "ask"


# -- ordering ------------------------------------------------------------------------------


def test_higher_priority_wins(service):
    add(service, "deny", priority=1, tool_name="git_status")
    add(service, "allow", priority=5, tool_pattern="git_*")
    assert service.decide("builtin", "git_status", {}).kind == "allow"


def test_negative_priorities(service):
    add(service, "allow", priority=-5, tool_name="git_status")
    add(service, "deny", priority=-10, tool_pattern="*")
    assert service.decide("builtin", "git_status", {}).kind == "allow"
    assert service.decide("builtin", "git_commit", {}).kind == "deny"


@pytest.mark.parametrize("first, second, expected", [
    ("allow", "deny", "deny"), ("deny", "allow", "deny"),
    ("allow", "ask", "ask"), ("ask", "allow", "ask"),
    ("ask", "deny", "deny"), ("deny", "ask", "deny"),
])
def test_priority_ties_prefer_stricter(service, first, second, expected):
    add(service, first, priority=3, tool_pattern="git_*")
    add(service, second, priority=3, tool_name="git_status")
    assert service.decide("builtin", "git_status", {}).kind == expected


def test_priority_ties_same_decision_lower_id_decides(service):
    first = add(service, "allow", priority=3, tool_pattern="git_*", description="first")
    add(service, "allow", priority=3, tool_name="git_status", description="second")
    assert service.decide("builtin", "git_status", {}).rule.id == first.id


# -- input patterns ------------------------------------------------------------------------


def test_input_pattern_per_subject_strictest_wins(service):
    add(service, "allow", tool_name="shell", input_pattern="git status*")
    assert service.decide("builtin", "shell", {"command": "git status"}).kind == "allow"
    assert service.decide("builtin", "shell", {"command": "git status -s"}).kind == "allow"
    # one subject unmatched → ask for the whole chain
    chained = service.decide("builtin", "shell", {"command": "git status && rm -rf x"})
    assert chained.kind == "ask"
    assert [s.kind for s in chained.subjects] == ["allow", "ask"]


def test_one_deny_subject_denies_the_chain(service):
    add(service, "allow", priority=10, tool_name="shell", input_pattern="git *")
    add(service, "deny", priority=0, tool_name="shell", input_pattern="rm *")
    decision = service.decide("builtin", "shell", {"command": "git status; rm -rf /"})
    assert decision.kind == "deny"
    assert decision.rule.input_pattern == "rm *"
    assert service.decide("builtin", "shell", {"command": "git log | git diff"}).kind == "allow"


def test_input_pattern_is_case_sensitive(service):
    add(service, "allow", tool_name="shell", input_pattern="ls*")
    assert service.decide("builtin", "shell", {"command": "LS"}).kind == "ask"


def test_subjects_normalise_whitespace(service):
    add(service, "deny", tool_name="shell", input_pattern="rm -rf *")
    assert service.decide("builtin", "shell", {"command": "rm    -rf   /"}).kind == "deny"


def test_unanalysable_input_is_never_auto_approved(service):
    add(service, "allow", tool_name="shell", input_pattern="*")
    decision = service.decide("builtin", "shell", {"command": "echo $(rm -rf x)"})
    assert decision.kind == "ask"
    assert "could not be fully analysed" in decision.note


def test_malformed_input_never_crashes_or_allows(service):
    add(service, "allow", tool_name="shell", input_pattern="*")
    for bad in [None, [], "ls", 42, {"command": 5}, {}]:
        assert service.decide("builtin", "shell", bad).kind == "ask"


def test_path_pattern_globs(service, project: Path):
    add(service, "allow", tool_name="read_file", input_pattern=f"{project}/docs/*.md")
    assert service.decide("builtin", "read_file", {"path": "docs/a.md"}).kind == "allow"
    assert service.decide("builtin", "read_file", {"path": "docs/sub/a.md"}).kind == "ask"
    assert service.decide("builtin", "read_file",
                          {"path": "docs/../secret/a.md"}).kind == "ask"


def test_double_star_crosses_folders_and_relative_patterns(service, project: Path):
    add(service, "allow", tool_name="write_file", input_pattern="doc/**")
    assert service.decide("builtin", "write_file", {"path": "doc/a/b/c.txt"}).kind == "allow"
    assert service.decide("builtin", "write_file", {"path": "doc"}).kind == "allow"
    assert service.decide("builtin", "write_file", {"path": "doc_evil/x"}).kind == "ask"
    assert service.decide("builtin", "write_file", {"path": "/etc/doc/x"}).kind == "ask"
    assert service.decide("builtin", "write_file", {"path": "doc/../../x"}).kind == "ask"


def test_pattern_rule_uses_each_tools_subject_kind(service):
    add(service, "deny", tool_pattern="*", input_pattern="*secret*")
    assert service.decide("builtin", "read_file", {"path": "secret.txt"}).kind == "deny"
    assert service.decide("builtin", "fetch", {"host": "secret.example"}).kind == "deny"
    assert service.decide("builtin", "shell", {"command": "cat secret"}).kind == "deny"
    assert service.decide("builtin", "read_file", {"path": "public.txt"}).kind == "ask"


def test_host_subjects(service):
    add(service, "allow", tool_name="fetch", input_pattern="*.python.org")
    assert service.decide("builtin", "fetch", {"host": "docs.python.org"}).kind == "allow"
    assert service.decide("builtin", "fetch", {"host": "DOCS.Python.org"}).kind == "allow"
    assert service.decide("builtin", "fetch", {"host": "python.org.evil.com"}).kind == "ask"


def test_unknown_tool_matches_canonical_json(service):
    add(service, "allow", server_id="mcp1", tool_name="lookup", input_pattern='{"q":"a*"}')
    assert service.decide("mcp1", "lookup", {"q": "abc"}).kind == "allow"
    assert service.decide("mcp1", "lookup", {"q": "xyz"}).kind == "ask"


# -- cache ---------------------------------------------------------------------------------


def test_edits_take_effect_immediately_through_any_repository(service, empty_db):
    assert service.decide("builtin", "git_status", {}).kind == "ask"
    other = RuleRepository(empty_db)
    rule = other.add(PermissionRule(decision="allow", tool_name="git_status"))
    assert service.decide("builtin", "git_status", {}).kind == "allow"
    other.update(rule.id, decision="deny")
    assert service.decide("builtin", "git_status", {}).kind == "deny"
    other.delete(rule.id)
    assert service.decide("builtin", "git_status", {}).kind == "ask"


def test_decide_does_not_touch_the_database(service, empty_db):
    add(service, "allow", tool_name="shell", input_pattern="ls*")
    service.decide("builtin", "shell", {"command": "ls"})  # warm the cache
    statements: list[str] = []
    empty_db.conn.set_trace_callback(statements.append)
    try:
        for _ in range(3):
            service.decide("builtin", "shell", {"command": "ls -la"})
            service.decide("builtin", "git_status", {})
    finally:
        empty_db.conn.set_trace_callback(None)
    assert statements == []


def test_decide_works_after_connection_closed(service, empty_db):
    add(service, "deny", tool_name="git_commit")
    service.decide("builtin", "git_commit", {})
    empty_db.conn.close()
    assert service.decide("builtin", "git_commit", {}).kind == "deny"
    with pytest.raises(sqlite3.ProgrammingError):
        empty_db.conn.execute("select 1")


def test_registry_change_refreshes_subject_kinds(empty_db, project):
    from app.core.tools.providers.base import StaticProvider
    from app.core.tools.registry import ToolRegistry
    from tests.unit.permissions.helpers import FakeTool, spec

    registry = ToolRegistry()
    service = ToolPermissionService(empty_db, registry=registry, project_root=project)
    service.rules.add(PermissionRule(decision="allow", tool_name="late", input_pattern="a"))
    assert service.decide("builtin", "late", {"x": 1}).kind == "ask"
    registry.register_provider(StaticProvider([FakeTool(spec(
        "late", subjects_fn=lambda i, _w: [str(i["x"])]))]))
    assert service.decide("builtin", "late", {"x": "a"}).kind == "allow"


@pytest.mark.parametrize("pattern", ["Git_*", "GIT_STATUS", "*_STATUS", "G*S", "*"])
@pytest.mark.parametrize("name", ["git_status", "GIT_STATUS", "Git_Status"])
def test_uppercase_patterns_match_any_case(service, pattern, name):
    add(service, "deny", tool_pattern=pattern)
    assert service.decide("builtin", name, {}).kind == "deny"


@pytest.mark.parametrize("pattern", ["git_*x", "*_commit", "x*", "git_status_*"])
def test_index_does_not_over_match(service, pattern):
    add(service, "deny", tool_pattern=pattern)
    assert service.decide("builtin", "git_status", {}).kind == "ask"
