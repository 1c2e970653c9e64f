"""Rule validation and CRUD: bad values are refused with clear errors, the table stays valid."""

from __future__ import annotations

import sqlite3

import pytest

from app.core.permissions.repository import RuleNotFoundError, RuleRepository
from app.core.permissions.rules import InvalidRuleError, PermissionRule


@pytest.fixture
def repo(db) -> RuleRepository:
    return RuleRepository(db)


@pytest.mark.parametrize("fields, message", [
    ({"decision": "maybe"}, "decision must be one of"),
    ({"decision": "allow", "tool_name": "a", "tool_pattern": "a*"}, "not both"),
    ({"decision": "allow", "priority": 1.5}, "priority must be an integer"),
    ({"decision": "allow", "priority": "10"}, "priority must be an integer"),
    ({"decision": "allow", "priority": True}, "priority must be an integer"),
    ({"decision": "allow", "tool_pattern": "bad\x00"}, "control"),
    ({"decision": "allow", "tool_pattern": "has space*"}, "whitespace"),
    ({"decision": "allow", "tool_name": "x*"}, "use tool_pattern"),
    ({"decision": "allow", "input_pattern": "a" * 1001}, "longer than"),
    ({"decision": "allow", "input_pattern": "   "}, "only whitespace"),
    ({"decision": "allow", "server_id": 5}, "must be text"),
    ({"decision": "allow", "input_pattern": "zero\u200bwidth"}, "invisible"),
])
def test_bad_values_are_refused(repo, fields, message):
    before = repo.list()
    with pytest.raises(InvalidRuleError, match=message):
        repo.add(PermissionRule(**fields))
    assert repo.list() == before


def test_add_update_delete_roundtrip(repo):
    rule = repo.add(decision="allow", tool_pattern="git_*", priority=7, description="git")
    assert rule.id is not None and rule.auto_approve
    assert repo.get(rule.id) == rule
    updated = repo.update(rule.id, decision="deny", input_pattern="push*")
    assert updated.decision == "deny" and not updated.auto_approve
    assert repo.get(rule.id).input_pattern == "push*"
    with pytest.raises(InvalidRuleError):
        repo.update(rule.id, tool_name="exact")  # would set both name and pattern
    assert repo.get(rule.id).tool_name is None
    repo.delete(rule.id)
    with pytest.raises(RuleNotFoundError):
        repo.get(rule.id)
    with pytest.raises(RuleNotFoundError):
        repo.delete(rule.id)


def test_empty_strings_mean_not_set(repo):
    rule = repo.add(decision="ask", server_id="", tool_name="", tool_pattern="", input_pattern="")
    stored = repo.get(rule.id)
    assert (stored.server_id, stored.tool_name, stored.tool_pattern, stored.input_pattern) == (
        None, None, None, None)


def test_auto_approve_column_mirrors_decision(repo, db):
    rule = repo.add(decision="allow")
    repo.add(decision="deny")
    rows = db.conn.execute(
        "SELECT decision, auto_approve FROM tool_permission_rules").fetchall()
    assert all(flag == (decision == "allow") for decision, flag in rows)
    repo.update(rule.id, decision="ask")
    assert db.conn.execute("SELECT auto_approve FROM tool_permission_rules WHERE id = ?",
                           (rule.id,)).fetchone()[0] == 0


@pytest.mark.parametrize("sql", [
    "INSERT INTO tool_permission_rules (decision, auto_approve, created_at, updated_at)"
    " VALUES ('sure', 0, 'x', 'x')",
    "INSERT INTO tool_permission_rules (decision, auto_approve, created_at, updated_at)"
    " VALUES ('allow', 0, 'x', 'x')",
    "INSERT INTO tool_permission_rules (decision, auto_approve, priority, created_at, updated_at)"
    " VALUES ('ask', 0, 'high', 'x', 'x')",
    "INSERT INTO tool_permission_rules (decision, auto_approve, priority, created_at, updated_at)"
    " VALUES ('ask', 0, 1.5, 'x', 'x')",
    "INSERT INTO tool_permission_rules (tool_name, tool_pattern, decision, auto_approve,"
    " created_at, updated_at) VALUES ('a', 'a*', 'ask', 0, 'x', 'x')",
])
def test_check_constraints_refuse_bad_rows(db, sql):
    with pytest.raises(sqlite3.IntegrityError):
        db.conn.execute(sql)


def test_export_import_roundtrip(repo):
    repo.replace_all([])
    repo.add(decision="allow", tool_pattern="read_*", priority=3, description="reads")
    repo.add(decision="deny", server_id="s", tool_name="t", input_pattern="rm *")
    exported = repo.export_json()
    repo.replace_all([])
    repo.replace_all(RuleRepository.parse_json(exported))
    again = [(r.decision, r.server_id, r.tool_name, r.tool_pattern, r.input_pattern, r.priority,
              r.description) for r in repo.list()]
    assert again == [("allow", None, None, "read_*", None, 3, "reads"),
                     ("deny", "s", "t", None, "rm *", 0, "")]


@pytest.mark.parametrize("text, message", [
    ("not json", "not valid JSON"),
    ('{"rules": 3}', "expected a list"),
    ('[{"decision": "allow", "bogus": 1}]', "unknown fields"),
    ('[{"decision": "allow"}, {"decision": "nah"}]', "rule 2"),
    ('[{"decision": "allow", "priority": "x"}]', "rule 1: priority"),
])
def test_import_refuses_bad_files_without_touching_table(repo, text, message):
    before = repo.list()
    with pytest.raises(InvalidRuleError, match=message):
        repo.replace_all(RuleRepository.parse_json(text))
    assert repo.list() == before


def test_listeners_are_notified(repo):
    seen = []
    unsubscribe = repo.changes.subscribe(lambda: seen.append(1))
    rule = repo.add(decision="ask")
    repo.update(rule.id, priority=2)
    repo.delete(rule.id)
    unsubscribe()
    repo.add(decision="ask")
    assert len(seen) == 3
