"""Tools' default rules and profile defaults come from their specs, given once per database.

The rules are added at every start (build_services), not only when the database is created, so a
tool added in a new version brings its rules to existing databases; a default the person
deleted or edited is never brought back or changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest

from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import PermissionRule
from app.core.services import build_services, default_rules, profile_defaults
from app.core.store.db import open_database
from app.core.store.migrations import _FTS_COLUMNS
from app.core.store.seed import FIRST_RUN_TOOL_RULES
from app.core.store.sql_script import _fts_sql, split_sql
from app.core.tools.base import (
    DefaultRule,
    RiskLevel,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
)
from app.core.tools.providers.base import StaticProvider
from app.core.tools.registry import ToolRegistry


class FakeTool:
    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.ok("")


def _spec(name: str, *rules: DefaultRule, **fields: Any) -> ToolSpec:
    return ToolSpec(name, name, {"type": "object"}, ToolCategory.READ_ONLY, RiskLevel.LOW,
                    default_rules=rules, **fields)


NEW_TOOL = _spec("lookup", DefaultRule("allow", "docs.*", "lookups of docs are harmless"),
                 DefaultRule("deny", "secrets*", "never look up secrets", priority=5),
                 subjects_fn=lambda tool_input, _wd: [str(tool_input["q"])])


def _registry(*specs: ToolSpec) -> ToolRegistry:
    return ToolRegistry([StaticProvider([FakeTool(s) for s in specs])])


def _start(db, data_dir, *specs: ToolSpec):
    return build_services(db, data_dir, registry=_registry(*specs))


def _mine(db, tool_name: str = "lookup") -> list[PermissionRule]:
    return [r for r in RuleRepository(db).list() if r.tool_name == tool_name]


def test_a_new_tools_default_rules_reach_an_existing_database(db, fresh_data_dir):
    _start(db, fresh_data_dir)  # the database as an older version left it: no "lookup"
    assert _mine(db) == []

    services = _start(db, fresh_data_dir, NEW_TOOL)
    rules = _mine(db)
    assert {(r.decision, r.input_pattern, r.priority, r.description) for r in rules} == {
        ("allow", "docs.*", 0, "lookups of docs are harmless"),
        ("deny", "secrets*", 5, "never look up secrets")}
    assert all(r.server_id == "builtin" for r in rules)
    # Through the repository: the permission service sees them at once.
    assert services.permissions.decide("builtin", "lookup", {"q": "secrets.txt"}).kind == "deny"
    assert services.permissions.decide("builtin", "lookup", {"q": "docs.x"}).kind == "allow"


def test_seeding_notifies_the_permission_cache(db, fresh_data_dir):
    services = _start(db, fresh_data_dir, replace(NEW_TOOL, default_rules=()))
    assert services.permissions.decide("builtin", "lookup", {"q": "secrets"}).kind == "ask"
    seen: list[int] = []
    services.permissions.rules.changes.subscribe(lambda: seen.append(1))
    added = services.permissions.rules.seed_defaults(default_rules([NEW_TOOL]))
    assert len(added) == 2 and seen == [1]
    assert services.permissions.decide("builtin", "lookup", {"q": "secrets"}).kind == "deny"
    assert services.permissions.rules.seed_defaults(default_rules([NEW_TOOL])) == []
    assert seen == [1]  # nothing added, nothing to tell


def test_a_deleted_default_never_comes_back(db, fresh_data_dir):
    _start(db, fresh_data_dir, NEW_TOOL)
    repo = RuleRepository(db)
    for rule in _mine(db):
        repo.delete(rule.id)
    _start(db, fresh_data_dir, NEW_TOOL)
    _start(db, fresh_data_dir, NEW_TOOL)
    assert _mine(db) == []


def test_an_edited_default_is_never_changed_or_duplicated(db, fresh_data_dir):
    _start(db, fresh_data_dir, NEW_TOOL)
    repo = RuleRepository(db)
    allow = next(r for r in _mine(db) if r.decision == "allow")
    repo.update(allow.id, decision="ask", input_pattern="docs.example.*", description="mine")
    _start(db, fresh_data_dir, NEW_TOOL)
    edited = repo.get(allow.id)
    assert (edited.decision, edited.input_pattern, edited.description) == (
        "ask", "docs.example.*", "mine")
    assert len(_mine(db)) == 2  # the edited one and the untouched deny, nothing re-added


def test_custom_rules_are_untouched_and_restarts_are_idempotent(db, fresh_data_dir):
    repo = RuleRepository(db)
    custom = repo.add(PermissionRule("allow", server_id="builtin", tool_name="lookup",
                                     input_pattern="docs.*", description="my own"))
    before = {r.id: r for r in repo.list() if r.id != custom.id}
    for _ in range(3):
        _start(db, fresh_data_dir, NEW_TOOL)
    assert repo.get(custom.id) == custom
    after = repo.list()
    assert len(after) == len(before) + 1 + 2  # the custom rule and the two defaults, once
    # The tool's allow default is added next to the person's identical rule (never merged
    # into it, never replacing it): deleting one leaves the other.
    assert sum(r.input_pattern == "docs.*" for r in after) == 2


def test_first_run_rules_are_recorded_as_given(db, fresh_data_dir):
    """Databases got these rules from migration 1: a spec declaring one adds no duplicate,
    and one the person deleted before upgrading stays deleted."""
    repo = RuleRepository(db)
    web_allow = next(r for r in repo.list() if r.tool_name == "web_fetch")
    repo.delete(web_allow.id)
    same = [_spec("web_fetch", DefaultRule("allow", None, "web_fetch is read-only")),
            _spec("git_ops", DefaultRule("allow", "status"), DefaultRule("allow", "log"))]
    before = len(repo.list())
    _start(db, fresh_data_dir, *same)
    assert len(repo.list()) == before
    keys = {k for (k,) in db.conn.execute("SELECT key FROM seeded_default_rules")}
    assert len(keys) == len(FIRST_RUN_TOOL_RULES)
    assert "builtin:read_file:allow:" in keys and "builtin:git_ops:allow:status" in keys


def test_migration_records_first_run_rules_of_an_older_database(fresh_data_dir):
    """An existing database at the previous version: its rules are recorded even when edited."""
    path = fresh_data_dir / "old.sqlite3"
    db = open_database(path)
    repo = RuleRepository(db)
    web = next(r for r in repo.list() if r.tool_name == "web_fetch")
    repo.update(web.id, decision="ask")
    # Roll back to version 3, before the record existed, as an older Tebiki left it (what
    # later migrations added goes too).
    db.conn.execute("DROP TABLE answer_versions")
    db.conn.execute("DROP TABLE sub_agent_executions")
    db.conn.execute("DROP TABLE orchestration_runs")
    db.conn.execute("DROP INDEX idx_conversations_parent")
    db.conn.execute("DROP TABLE seeded_default_rules")
    db.conn.execute("DROP TABLE turn_usage")
    db.conn.execute("ALTER TABLE tool_executions DROP COLUMN changes")
    for table, column in (("agent_profiles", "permission_mode"),
                          ("agent_profiles", "review_before_asking"),
                          ("agent_profiles", "review_plan"), ("tool_executions", "reviews"),
                          *(("agent_profiles", c) for c in ("thinking", "thinking_display",
                                                            "effort", "prompt_cache",
                                                            "cache_ttl")),
                          ("tool_permission_rules", "ignore_flow"), ("conversations", "flow"),
                          ("tool_executions", "decided_by"), ("tool_executions", "agent"),
                          ("agent_profiles", "orchestration"), ("conversations", "parent_id"),
                          ("tool_executions", "for_person")):
        db.conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    db.conn.execute("DROP INDEX idx_conversations_project")
    # The word indexes of migration 11 go back to migration 3's JSON ones.
    for trigger in ("messages_ai", "messages_ad", "messages_au", "tool_executions_ai",
                    "tool_executions_ad", "tool_executions_au"):
        db.conn.execute(f"DROP TRIGGER {trigger}")
    for table in ("messages_fts", "tool_executions_fts"):
        db.conn.execute(f"DROP TABLE {table}")
    db.conn.execute("DROP VIEW tool_executions_search")
    db.conn.execute("ALTER TABLE messages DROP COLUMN search_text")
    for table in ("messages", "tool_executions"):
        for statement in split_sql(_fts_sql(table, _FTS_COLUMNS[table])):
            db.conn.execute(statement)
    db.conn.execute("PRAGMA user_version=3")
    db.close()

    db = open_database(path)
    try:
        _start(db, fresh_data_dir, _spec("web_fetch", DefaultRule("allow")))
        web_rules = [r for r in RuleRepository(db).list() if r.tool_name == "web_fetch"]
        assert [(r.id, r.decision) for r in web_rules] == [(web.id, "ask")]
    finally:
        db.close()


def test_an_invalid_default_rule_is_skipped_not_fatal(db, fresh_data_dir):
    broken = _spec("broken", DefaultRule("allow", "   "), DefaultRule("deny", "x"))
    _start(db, fresh_data_dir, broken)
    assert [(r.decision, r.input_pattern) for r in _mine(db, "broken")] == [("deny", "x")]


# -- profile defaults ------------------------------------------------------------------------

def test_new_profile_takes_enabled_tools_and_configs_from_specs(db, fresh_data_dir):
    specs = [_spec("reader", default_enabled=True),
             _spec("writer", default_config={"allowed_write_dirs": ["doc"]}),
             _spec("other")]
    services = _start(db, fresh_data_dir, *specs)
    profile = services.profiles.ensure_default()
    assert profile.id is not None
    assert services.profiles.enabled_tools(profile.id) == ["reader"]
    settings = services.profiles.tool_settings(profile.id)
    assert settings["writer"].config == {"allowed_write_dirs": ["doc"]}
    assert not settings["writer"].enabled
    assert "other" not in settings


def test_profile_defaults_of_the_builtin_tools_are_safe():
    from app.core.tools.default_registry import default_registry

    specs = default_registry().specs()
    defaults = profile_defaults(specs)
    by_name = {s.name: s for s in specs}
    assert defaults["enabled"] == [s.name for s in specs if s.default_enabled]
    # The tools that change files or run arbitrary commands start off.
    for risky in ("write_file", "edit_file", "shell_exec", "self_eval"):
        assert risky in by_name and risky not in defaults["enabled"], risky


@pytest.mark.parametrize("decision", ["allow", "ask", "deny"])
def test_default_rules_keep_the_tools_identity(decision):
    spec = _spec("t", DefaultRule(decision, "p*", "d", 3), server_id="srv")
    (rule,) = default_rules([spec])
    assert rule == PermissionRule(decision, server_id="srv", tool_name="t", input_pattern="p*",
                                  priority=3, description="d")
