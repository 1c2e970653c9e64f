"""Full-text search over conversations and the audit trail (migration 3: FTS5 tables and triggers,
as sqlite-utils' enable_fts makes them; migration 11 re-indexes messages and tool inputs by their
words: tests/unit/test_store_message_search.py)."""

from __future__ import annotations

import re
import sqlite3

import pytest
import sqlite_utils
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.store.audit import AuditRepository
from app.core.store.conversations import ConversationRepository
from app.core.store.db import open_database, quote_fts, schema_version
from app.core.store.migrations import _FTS_COLUMNS, MIGRATIONS, SCHEMA_VERSION
from app.core.store.sql_script import split_sql

HOSTILE = ['"', '""', '"unbalanced', "a\"b", "*", "wor*", "NEAR(a b)", "NEAR", "(", ")",
           "((a)", "a OR", "AND", "NOT x", "-x", "^x", "content:x", "{a b}: c", "a + b", "'",
           "'; DROP TABLE messages; --", "\\", "\x00", "  ", "", "🦊 \u200b"]


def _fts_ok(db, table: str) -> None:
    # FTS5's own consistency check against the content table: raises if the index drifted.
    db.conn.execute(f"INSERT INTO {table}_fts({table}_fts) VALUES('integrity-check')")


def test_a_message_is_found_after_insert_update_and_delete(db):
    repo = ConversationRepository(db)
    conv = repo.create(title="plain")
    other = repo.create(title="other")
    message_id = repo.append(conv.id, "user", "the quick marmalade fox")
    repo.append(other.id, "user", "nothing to see")
    assert [c.id for c in repo.search("marmalade")] == [conv.id]

    # Written behind the repository's back: the trigger, not the repository, keeps the index
    # (of search_text, the words the repository derives from the content: migration 11).
    db.conn.execute("UPDATE messages SET content = ?, search_text = ? WHERE id = ?",
                    ('"pumpernickel"', "pumpernickel", message_id))
    assert repo.search("marmalade") == []
    assert [c.id for c in repo.search("pumpernickel")] == [conv.id]

    db.conn.execute("DELETE FROM messages WHERE id = ?", (message_id,))
    assert repo.search("pumpernickel") == []
    _fts_ok(db, "messages")


def test_titles_are_searched_and_follow_renames(db):
    repo = ConversationRepository(db)
    conv = repo.create(title="Quarterly report")
    assert [c.id for c in repo.search("quarterly")] == [conv.id]  # case-insensitive
    repo.rename(conv.id, "Holiday plans")
    assert repo.search("quarterly") == []
    assert [c.title for c in repo.search("holiday")] == ["Holiday plans"]
    _fts_ok(db, "conversations")


def test_search_words_are_literal_not_fts_syntax(db):
    repo = ConversationRepository(db)
    conv = repo.create()
    repo.append(conv.id, "user", "world peace")
    assert repo.search("wor*") == []  # not a prefix query
    assert repo.search("world OR nothing") == []  # OR is a word to find, not an operator
    assert [c.id for c in repo.search("peace world")] == [conv.id]  # every word, any order


def test_the_index_survives_a_restart(fresh_data_dir):
    path = fresh_data_dir / "t.sqlite3"
    db = open_database(path)
    conv = ConversationRepository(db).create(title="kept")
    ConversationRepository(db).append(conv.id, "assistant",
                                      [{"type": "text", "text": "zanzibar"}])
    AuditRepository(db).record(tool_name="read_file", server_id="builtin",
                               tool_input={"path": "notes.md"}, decision="allow",
                               outcome="executed", output="zanzibar")
    db.close()

    db = open_database(path)
    try:
        assert [c.id for c in ConversationRepository(db).search("zanzibar")] == [conv.id]
        assert [e.tool_name for e in AuditRepository(db).search("zanzibar")] == ["read_file"]
    finally:
        db.close()


def test_migrating_an_older_database_indexes_its_existing_rows(fresh_data_dir):
    path = fresh_data_dir / "v2.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    for migration in MIGRATIONS[:2]:
        assert isinstance(migration, str)
        for statement in split_sql(migration):
            conn.execute(statement)
    conn.execute("PRAGMA user_version=2")
    conn.execute("INSERT INTO conversations (title, created_at, updated_at)"
                 " VALUES ('old talk', 'x', 'x')")
    conn.execute("INSERT INTO messages (conversation_id, role, content, created_at)"
                 " VALUES (1, 'user', '\"ancient words\"', 'x')")
    conn.execute("INSERT INTO tool_executions (tool_name, input, decision, outcome, created_at)"
                 " VALUES ('grep_search', '{\"pattern\": \"relic\"}', 'allow', 'executed', 'x')")
    conn.close()

    db = open_database(path)
    try:
        assert schema_version(db) == SCHEMA_VERSION
        assert [c.title for c in ConversationRepository(db).search("ancient")] == ["old talk"]
        assert [e.tool_name for e in AuditRepository(db).search("relic")] == ["grep_search"]
    finally:
        db.close()


def test_audit_search_covers_name_input_and_output_and_follows_finish(db):
    audit = AuditRepository(db)
    first = audit.record(tool_name="shell_exec", server_id="builtin",
                         tool_input={"command": "make tarball"}, decision="allow",
                         outcome="executed", output="ok")
    begun = audit.begin(tool_name="web_fetch", server_id="builtin",
                        tool_input={"url": "https://example.org"}, decision="ask",
                        state="pending")
    assert [e.id for e in audit.search("shell_exec")] == [first]
    assert [e.id for e in audit.search("tarball")] == [first]
    assert [e.id for e in audit.search("example")] == [begun]
    assert audit.search("teapot") == []

    audit.finish(begun, tool_name="web_fetch", server_id="builtin",
                 tool_input={"url": "https://example.org"}, decision="allow",
                 outcome="executed", output="I am a teapot")
    (found,) = audit.search("teapot")
    assert (found.id, found.state, found.output) == (begun, "done", "I am a teapot")
    assert [e.id for e in audit.search("ok")] == [first]
    _fts_ok(db, "tool_executions")


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_fail(db, query):
    repo = ConversationRepository(db)
    conv = repo.create(title="NEAR (a b) * content")
    repo.append(conv.id, "user", 'a "quoted" NEAR b * (paren')
    AuditRepository(db).record(tool_name="t", server_id="builtin", tool_input={"q": query},
                               decision="allow", outcome="executed", output=query)
    assert isinstance(repo.search(query), list)
    assert isinstance(AuditRepository(db).search(query), list)


def test_a_query_with_fts_syntax_finds_its_words_literally(db):
    repo = ConversationRepository(db)
    conv = repo.create()
    repo.append(conv.id, "user", "use NEAR(a b) carefully")
    assert [c.id for c in repo.search("NEAR(a")] == [conv.id]


# The db fixture is shared by the examples on purpose: searching never writes.
@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(alphabet=st.sampled_from('ab "*()^:+-{}NEAROTD\\\'\t\x00'), max_size=12)
       | st.text(max_size=20))
def test_any_query_string_is_safe(db, query):
    conv = ConversationRepository(db)
    if not conv.list(limit=1):
        conv.append(conv.create(title="ab NEAR").id, "user", "a b * ( NEAR")
    assert isinstance(conv.search(query), list)
    assert isinstance(AuditRepository(db).search(query), list)


# Migration 3 and the searches are plain SQL (opening the store must not import sqlite-utils);
# what they reproduce of sqlite-utils is checked against sqlite-utils itself.

def _schema(conn: sqlite3.Connection) -> list[tuple]:
    return conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"
                        " ORDER BY type, name").fetchall()


def test_migration_3_makes_exactly_the_schema_sqlite_utils_enable_fts_made(fresh_data_dir):
    # Databases migrated by earlier versions got their index from enable_fts: a new database
    # must have the same tables and triggers, statement for statement.
    reference = sqlite_utils.Database(sqlite3.connect(fresh_data_dir / "ref.sqlite3",
                                                      isolation_level=None),
                                      execute_plugins=False)
    for migration in MIGRATIONS[:2]:
        assert isinstance(migration, str)
        for statement in split_sql(migration):
            reference.conn.execute(statement)
    for table, columns in _FTS_COLUMNS.items():
        reference.table(table).enable_fts(columns, fts_version="FTS5", create_triggers=True)

    ours = sqlite3.connect(fresh_data_dir / "ours.sqlite3", isolation_level=None)
    for migration in MIGRATIONS[:3]:
        assert isinstance(migration, str)
        for statement in split_sql(migration):
            ours.execute(statement)
    try:
        assert _schema(ours) == _schema(reference.conn)
    finally:
        ours.close()
        reference.close()


@settings(max_examples=500, deadline=None)
@given(query=st.text(alphabet=st.sampled_from('ab "*() \t\n\x00NEAR:'), max_size=16)
       | st.text(max_size=24))
def test_quote_fts_is_sqlite_utils_quote_fts(query):
    assert quote_fts(query) == sqlite_utils.Database(memory=True).quote_fts(query)


def _words(text: str) -> set[str]:
    # FTS5's default tokenizer: runs of letters and digits, case-folded ("_" separates).
    return {w.lower() for w in re.findall(r"[^\W_]+", text)}


@pytest.mark.parametrize("query", ["zanzibar", "make", "example teapot", "builtin", "x y",
                                   "command", "url", "shell_exec 3"])
def test_audit_search_finds_the_calls_holding_every_word(db, query):
    # Every word in the tool name, the input's values (never its keys: migration 11) or the
    # output; newest first, limited.
    audit = AuditRepository(db)
    calls = {}
    for i in range(6):
        name = "shell_exec" if i % 2 else "web_fetch"
        tool_input = {"command": f"make {i}", "url": "https://example.org"}
        output = "zanzibar teapot" if i % 3 == 0 else "x y"
        row = audit.record(tool_name=name, server_id="builtin", tool_input=tool_input,
                           decision="allow", outcome="executed", output=output)
        calls[row] = _words(" ".join([name, *tool_input.values(), output]))
    expected = sorted((i for i, words in calls.items() if _words(query) <= words),
                      reverse=True)[:4]
    assert [e.id for e in audit.search(query, limit=4)] == expected


def test_settings_set_writes_what_sqlite_utils_upsert_wrote(db):
    from app.core.store.settings import SettingsRepository

    settings_repo = SettingsRepository(db)
    settings_repo.set("ui.theme", "dark")
    first = db.conn.execute("SELECT value, updated_at FROM settings WHERE key = 'ui.theme'"
                            ).fetchone()
    settings_repo.set("ui.theme", {"name": "light"})
    (value,) = db.conn.execute("SELECT value FROM settings WHERE key = 'ui.theme'").fetchone()
    assert first[0] == '"dark"' and value == '{"name": "light"}'
    assert db.conn.execute("SELECT count(*) FROM settings").fetchone()[0] == 1
    db.table("settings").upsert({"key": "ui.theme", "value": '"dark"', "updated_at": "t"},
                                pk="key")
    assert settings_repo.get("ui.theme") == "dark"  # both write the same row
