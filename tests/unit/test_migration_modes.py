"""Migration 6: permission modes, flow labels, and the default rules that leaked — replaced
where the person never touched them, kept where they did, with a notice shown once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.core.permission_mode import PermissionMode
from app.core.permissions.flow import FlowLabel, FlowState
from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import PermissionRule
from app.core.services import build_services
from app.core.settings_fields import PENDING_NOTICES
from app.core.store.conversations import ConversationRepository
from app.core.store.db import open_database
from app.core.store.migrations import (
    DEFAULTS_CHANGED_NOTICE,
    MIGRATIONS,
    split_sql,
)
from app.core.store.profiles import AgentProfile, ProfileRepository
from app.core.store.seed import seed_default_rules
from app.core.tools.default_registry import default_registry


def _version_5_database(path: Path) -> None:
    """A database as Tebiki 5 left it: first-run rules, a profile, a person's own rules and
    one seeded rule the person edited."""
    conn = sqlite3.connect(path, isolation_level=None)
    for migration in MIGRATIONS[:5]:
        assert isinstance(migration, str)
        for statement in split_sql(migration):
            conn.execute(statement)
    seed_default_rules(conn, "2025-01-01T00:00:00.000Z")
    conn.execute("INSERT INTO tool_permission_rules (server_id, tool_name, input_pattern,"
                 " decision, auto_approve, priority, description, created_at, updated_at)"
                 " VALUES ('builtin', 'list_directory', NULL, 'allow', 1, 0,"
                 " 'list_directory is read-only', '2025-02-01T00:00:00.000Z',"
                 " '2025-02-01T00:00:00.000Z')")
    # The person's own rule that happens to look like a default, and an edited default.
    conn.execute("INSERT INTO tool_permission_rules (server_id, tool_name, input_pattern,"
                 " decision, auto_approve, priority, description, created_at, updated_at)"
                 " VALUES ('builtin', 'grep_search', NULL, 'allow', 1, 0, 'mine: grep anywhere',"
                 " '2025-03-01T00:00:00.000Z', '2025-03-01T00:00:00.000Z')")
    conn.execute("UPDATE tool_permission_rules SET updated_at = '2025-04-01T00:00:00.000Z'"
                 " WHERE tool_name = 'glob_search'")
    conn.execute("INSERT INTO agent_profiles (name, model, created_at, updated_at)"
                 " VALUES ('Default', 'm', 'x', 'x')")
    conn.execute("PRAGMA user_version=5")
    conn.close()


def test_old_defaults_are_replaced_and_the_persons_rules_kept(fresh_data_dir):
    path = fresh_data_dir / "tebiki.sqlite3"
    _version_5_database(path)
    db = open_database(path)
    try:
        rules = RuleRepository(db).list()
        by_tool = {(r.tool_name, r.description): r for r in rules}
        assert ("read_file", "read_file is read-only") not in by_tool  # unedited: replaced
        assert ("list_directory", "list_directory is read-only") not in by_tool
        assert (None, "Everything else asks before it runs") not in by_tool  # the mode answers
        assert ("grep_search", "mine: grep anywhere") in by_tool  # the person's own
        assert ("glob_search", "glob_search is read-only") in by_tool  # edited: untouched
        assert ("web_fetch", "web_fetch is read-only") in by_tool  # not a leaking default
        assert all(not r.ignore_flow for r in rules)
        profile = ProfileRepository(db).list()[0]
        assert profile.permission_mode is PermissionMode.ASK

        services = build_services(db, fresh_data_dir, registry=default_registry())
        added = {(r.tool_name, r.input_pattern) for r in services.permissions.rules.list()}
        assert ("read_file", "{project}/**") in added  # the new, project-scoped default
        assert services.take_notices() == [DEFAULTS_CHANGED_NOTICE]
        assert services.take_notices() == []  # said once
    finally:
        db.close()


def test_a_new_database_gets_the_new_defaults_and_no_notice(db, fresh_data_dir):
    services = build_services(db, fresh_data_dir, registry=default_registry())
    rules = services.permissions.rules.list()
    reads = [r for r in rules if r.tool_name == "read_file"]
    assert [r.input_pattern for r in reads] == ["{project}/**"]
    assert not [r for r in rules if r.tool_name is None and r.tool_pattern is None]
    assert services.settings.get(PENDING_NOTICES.key) is None


def test_permission_mode_round_trips_and_bad_values_are_refused(db):
    profiles = ProfileRepository(db)
    profile = profiles.create(AgentProfile(name="p", permission_mode=PermissionMode.AUTO))
    assert profile.id is not None
    assert profiles.get(profile.id).permission_mode is PermissionMode.AUTO
    profiles.set_permission_mode(profile.id, PermissionMode.PLAN)
    assert profiles.get(profile.id).permission_mode is PermissionMode.PLAN
    try:
        db.conn.execute("UPDATE agent_profiles SET permission_mode = 'yolo'")
    except sqlite3.IntegrityError:
        pass
    else:
        raise AssertionError("the CHECK constraint let an unknown mode in")


def test_ignore_flow_round_trips_through_the_repository_and_export(db):
    rules = RuleRepository(db)
    rule = rules.add(PermissionRule("allow", tool_name="web_fetch", ignore_flow=True))
    assert rules.get(rule.id).ignore_flow is True
    assert rules.update(rule.id, ignore_flow=False).ignore_flow is False
    exported = rules.parse_json(rules.export_json())
    assert any(r.tool_name == "web_fetch" for r in exported)


def test_flow_labels_persist_with_the_conversation(db):
    conversations = ConversationRepository(db)
    conv = conversations.create(title="t")
    flow = FlowState()
    flow.add(FlowLabel.READ_SENSITIVE, "~/.aws/credentials", "read_file")
    flow.add(FlowLabel.UNTRUSTED, "https://example.com", "web_fetch")
    conversations.set_flow(conv.id, flow.to_json())
    again = FlowState.from_json(conversations.flow(conv.id))
    assert again.labels == {FlowLabel.READ_SENSITIVE, FlowLabel.UNTRUSTED}
    assert again.sources_of(FlowLabel.READ_SENSITIVE)[0].source == "~/.aws/credentials"


def test_damaged_flow_labels_fail_closed():
    assert FlowState.from_json(None).labels == frozenset()
    for damaged in ({"sources": "nope"}, {"sources": [{"label": "read_sensitive"}]},
                    {"sources": [{"label": "bogus", "source": "x", "tool": "t", "at": "a"}]}):
        assert FlowLabel.READ_SENSITIVE in FlowState.from_json(damaged).labels


def test_migration_7_keeps_every_rule_and_accepts_review(fresh_data_dir):
    path = fresh_data_dir / "tebiki.sqlite3"
    _version_5_database(path)
    conn = sqlite3.connect(path, isolation_level=None)
    before = conn.execute("SELECT id, server_id, tool_name, input_pattern, decision, priority,"
                          " description, created_at, updated_at FROM tool_permission_rules"
                          " ORDER BY id").fetchall()
    conn.close()
    db = open_database(path)
    try:
        after = db.conn.execute(
            "SELECT id, server_id, tool_name, input_pattern, decision, priority, description,"
            " created_at, updated_at FROM tool_permission_rules ORDER BY id").fetchall()
        removed = {(None, "Everything else asks before it runs"),
                   ("read_file", "read_file is read-only"),
                   ("grep_search", "grep_search is read-only"),
                   ("list_directory", "list_directory is read-only")}
        assert after == [r for r in before if (r[2], r[6]) not in removed]
        rules = RuleRepository(db)
        review = rules.add(PermissionRule("review", tool_name="shell_exec"))
        assert rules.get(review.id).decision == "review"
        profile = ProfileRepository(db).list()[0]
        assert profile.review_before_asking is False and profile.review_plan is False
    finally:
        db.close()
