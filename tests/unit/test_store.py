"""Database opening, migrations, constraints and the small repositories."""

from __future__ import annotations

import sqlite3

import pytest

from app.core.store.audit import AuditRepository
from app.core.store.conversations import ConversationRepository
from app.core.store.db import DatabaseError, open_database, schema_version
from app.core.store.migrations import SCHEMA_VERSION
from app.core.store.profiles import (
    DEFAULT_ENABLED_TOOLS,
    AgentProfile,
    ProfileError,
    ProfileRepository,
    ToolSetting,
)
from app.core.store.settings import SettingsRepository


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
                       "updated_at"]


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
    enabled = profiles.enabled_tools(profile.id)
    assert set(enabled) == set(DEFAULT_ENABLED_TOOLS)
    for risky in ("write_file", "edit_file", "shell_exec", "self_eval"):
        assert risky not in enabled
    settings = profiles.tool_settings(profile.id)
    assert settings["write_file"].config == {"allowed_write_dirs": ["doc"]}
    assert settings["git_ops"].config == {"git_permission": "read_only"}


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
