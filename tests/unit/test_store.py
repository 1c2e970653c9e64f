"""Database opening, migrations, constraints and the small repositories."""

from __future__ import annotations

import gc
import sqlite3
import weakref

import pytest
import sqlite_utils

from app.core.permissions.repository import RuleRepository
from app.core.store import db as db_module
from app.core.store.audit import AuditRepository
from app.core.store.conversations import ConversationRepository
from app.core.store.db import DatabaseError, open_database, schema_version, store_of
from app.core.store.migrations import _V3, MIGRATIONS, SCHEMA_VERSION
from app.core.store.profiles import (
    AgentProfile,
    ProfileError,
    ProfileRepository,
    ToolSetting,
)
from app.core.store.settings import SettingsRepository
from app.core.store.sql_script import split_sql


def test_pragmas_and_version(db):
    conn = db.conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert schema_version(db) == SCHEMA_VERSION
    assert {"settings", "agent_profiles", "agent_tool_permissions", "tool_permission_rules",
            "conversations", "messages", "tool_executions"} <= set(db.table_names())


def test_rule_table_has_the_designed_columns(db):
    columns = [c.name for c in db["tool_permission_rules"].columns]
    assert columns == ["id", "server_id", "tool_name", "tool_pattern", "input_pattern",
                       "decision", "auto_approve", "priority", "description", "created_at",
                       "updated_at", "ignore_flow"]


def test_reopen_is_idempotent(fresh_data_dir):
    path = fresh_data_dir / "t.sqlite3"
    first = open_database(path)
    n = first["tool_permission_rules"].count
    first.close()
    second = open_database(path)
    assert second["tool_permission_rules"].count == n
    second.close()


def test_newer_schema_is_refused(fresh_data_dir):
    path = fresh_data_dir / "future.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(DatabaseError, match="newer"):
        open_database(path)


def test_garbage_file_is_a_clear_error(fresh_data_dir):
    path = fresh_data_dir / "garbage.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(DatabaseError, match="Cannot open database"):
        open_database(path)


def test_foreign_keys_cascade(db):
    profiles = ProfileRepository(db)
    profile = profiles.create(AgentProfile(name="p"))
    profiles.set_tool(profile.id, ToolSetting("shell_exec", True, {"a": 1}))
    profiles.delete(profile.id)
    assert db["agent_tool_permissions"].count == 0
    with pytest.raises(sqlite3.IntegrityError):
        db.conn.execute("INSERT INTO agent_tool_permissions (agent_id, tool_name, created_at,"
                        " updated_at) VALUES (999, 't', 'x', 'x')")


def test_default_profile_is_safe(db):
    profiles = ProfileRepository(db)
    profile = profiles.ensure_default()
    assert profiles.ensure_default() == profile
    # The store knows no tool: without defaults from the specs, nothing is enabled.
    assert profiles.enabled_tools(profile.id) == []
    assert profiles.tool_settings(profile.id) == {}


def test_default_profile_takes_the_given_defaults_once(db):
    profiles = ProfileRepository(db)
    profile = profiles.ensure_default(
        enabled=["read_file", "git_ops"],
        configs={"write_file": {"allowed_write_dirs": ["doc"]},
                 "git_ops": {"git_permission": "read_only"}})
    assert profiles.enabled_tools(profile.id) == ["git_ops", "read_file"]
    settings = profiles.tool_settings(profile.id)
    assert settings["write_file"] == ToolSetting("write_file", False,
                                                 {"allowed_write_dirs": ["doc"]})
    assert settings["git_ops"].config == {"git_permission": "read_only"}
    # An existing profile is never reset to defaults.
    profiles.set_enabled(profile.id, "read_file", False)
    assert profiles.ensure_default(enabled=["read_file", "shell_exec"]) == profile
    assert profiles.enabled_tools(profile.id) == ["git_ops"]


@pytest.mark.parametrize("changes, message", [
    ({"name": " "}, "name"),
    ({"temperature": 3}, "temperature"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"max_iterations": 2.5}, "max_iterations"),
    ({"provider": "nope"}, "provider"),
])
def test_profile_validation(db, changes, message):
    with pytest.raises(ProfileError, match=message):
        ProfileRepository(db).create(AgentProfile(name="x").__class__(**{"name": "x", **changes}))


def test_profile_names_are_unique(db):
    repo = ProfileRepository(db)
    repo.create(AgentProfile(name="a"))
    with pytest.raises(ProfileError, match="already exists"):
        repo.create(AgentProfile(name="a"))


def test_settings_roundtrip_and_secret_refusal(db):
    settings = SettingsRepository(db)
    settings.set("window.geometry", {"w": 10})
    assert settings.get("window.geometry") == {"w": 10}
    assert settings.get("missing", 3) == 3
    with pytest.raises(ValueError, match="keyring"):
        settings.set("anthropic_api_key", "sk-123")


def test_conversation_messages_roundtrip(db):
    repo = ConversationRepository(db)
    conv = repo.create(title="t")
    blocks = [{"type": "tool_use", "id": "tu_1", "name": "read_file", "input": {"path": "a"}}]
    repo.append(conv.id, "user", "hello")
    repo.append(conv.id, "assistant", blocks)
    assert [(m.role, m.content) for m in repo.messages(conv.id)] == [
        ("user", "hello"), ("assistant", blocks)]
    repo.delete(conv.id)
    assert repo.messages(conv.id) == []


def test_audit_records_and_filters(db):
    audit = AuditRepository(db)
    audit.record(tool_name="read_file", server_id="builtin", tool_input={"path": "a"},
                 decision="allow", outcome="executed", output="x", duration_ms=3)
    audit.record(tool_name="shell_exec", server_id="builtin", tool_input={"command": "rm"},
                 decision="deny", outcome="denied", is_error=True, output="refused")
    assert audit.count() == 2
    assert [e.tool_name for e in audit.list(errors_only=True)] == ["shell_exec"]
    assert audit.list(decision="allow")[0].input == {"path": "a"}
    with pytest.raises(sqlite3.IntegrityError):
        audit.record(tool_name="x", server_id="b", tool_input={}, decision="maybe",
                     outcome="executed")


def test_settings_set_twice_keeps_one_row_with_the_new_value(db):
    settings = SettingsRepository(db)
    settings.set("theme", "dark")
    settings.set("theme", {"name": "light"})
    assert settings.get("theme") == {"name": "light"}
    assert db.conn.execute("SELECT count(*) FROM settings WHERE key = 'theme'").fetchone()[0] == 1


def test_a_failed_write_leaves_no_setting_behind(db):
    # The upsert joins the store's transaction: rolling that back takes the row with it.
    settings = SettingsRepository(db)
    with pytest.raises(RuntimeError), store_of(db).transaction():
        db.table("settings").upsert({"key": "k", "value": "1", "updated_at": "x"}, pk="key")
        raise RuntimeError("boom")
    assert settings.get("k") is None


def test_one_store_per_database_shared_by_every_repository(fresh_data_dir):
    a = open_database(fresh_data_dir / "a.sqlite3")
    b = open_database(fresh_data_dir / "a.sqlite3")  # same file, another connection
    try:
        assert store_of(a) is store_of(a)
        assert store_of(a) is not store_of(b)
        assert store_of(a).lock is not store_of(b).lock
        assert store_of(a).conn is a.conn and store_of(a).db is a
        assert RuleRepository(a).changes is RuleRepository(a).changes
        assert RuleRepository(a).changes is not RuleRepository(b).changes
    finally:
        a.close()
        b.close()


def test_a_collected_database_takes_its_store_with_it():
    # A new database must never inherit a dead one's lock or listeners (id() reuse), and the
    # registry must not keep databases alive.
    db = sqlite_utils.Database(memory=True)
    store = weakref.ref(store_of(db))
    store_of(db).rule_changes.subscribe(lambda: None)
    del db
    gc.collect()
    assert store() is None
    fresh = sqlite_utils.Database(memory=True)
    assert store_of(fresh).rule_changes.listeners == []


def test_a_failing_migration_leaves_the_previous_version(fresh_data_dir, monkeypatch):
    path = fresh_data_dir / "t.sqlite3"

    def half_done(database: sqlite_utils.Database) -> None:
        for statement in split_sql(_V3):  # the FTS tables and triggers, then
            database.conn.execute(statement)
        raise RuntimeError("power cut")

    fts_version = MIGRATIONS.index(_V3) + 1
    monkeypatch.setattr(db_module, "MIGRATIONS", (*MIGRATIONS[:fts_version - 1], half_done))
    monkeypatch.setattr(db_module, "SCHEMA_VERSION", fts_version)
    with pytest.raises(RuntimeError, match="power cut"):
        open_database(path)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == fts_version - 1
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE '%_fts%'"
                            " OR type = 'trigger'").fetchone()[0] == 0
    finally:
        conn.close()
    monkeypatch.undo()
    database = open_database(path)
    try:
        assert schema_version(database) == SCHEMA_VERSION
    finally:
        database.close()


def test_a_calls_changes_are_kept_with_its_audit_row(db) -> None:
    """Migration 5: what a call changed (from its checkpoints) survives a restart."""
    from app.core.outcomes import CallState
    from app.core.store.audit import AuditRepository

    audit = AuditRepository(db)
    row = audit.begin(tool_name="shell_exec", server_id="builtin", tool_input={"command": "x"},
                      decision="allow", state=CallState.RUNNING, conversation_id=None,
                      tool_use_id="toolu_1")
    changes = {"before": "a" * 40, "after": "b" * 40,
               "changes": [{"path": "é.txt", "kind": "added", "old_path": None,
                            "binary": False}], "not_covered": []}
    audit.set_changes(row, changes)
    (stored,) = [e for e in audit.list() if e.id == row]
    assert stored.changes == changes
    assert [e.changes for e in audit.list() if e.id != row] == []



def test_closing_waits_for_the_queries_of_other_threads(fresh_data_dir):
    """Every query holds the store's lock; the close takes it too. Closing the connection
    between another thread's check and its statement crashed the whole process (seen when the
    window quit while a worker read the conversation's last message)."""
    import threading

    db = open_database(fresh_data_dir / "t.sqlite3")
    holding, release = threading.Event(), threading.Event()

    def reader() -> None:
        with store_of(db).lock:  # a repository query in progress
            holding.set()
            release.wait(10)

    worker = threading.Thread(target=reader)
    worker.start()
    assert holding.wait(10)
    closer = threading.Thread(target=db.close)
    closer.start()
    closer.join(0.2)
    still_waiting = closer.is_alive()
    release.set()
    worker.join(10)
    closer.join(10)
    assert still_waiting, "the connection was closed under a running query"
    assert not closer.is_alive()
    with pytest.raises(sqlite3.ProgrammingError):  # after the close: an error, not a crash
        ConversationRepository(db).last_message(1)
