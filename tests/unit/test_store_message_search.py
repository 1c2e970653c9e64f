"""Conversation search finds the words of messages, not their JSON (migration 11:
messages.search_text, app.core.store.search_text)."""

from __future__ import annotations

import base64
import json
import re
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import app.core.store.db as db_module
import app.core.store.search_text as search_text_module
from app.core.outcomes import CallState, Outcome
from app.core.store.audit import AuditRepository
from app.core.store.conversations import ConversationRepository
from app.core.store.db import open_database, schema_version
from app.core.store.migrations import MIGRATIONS, SCHEMA_VERSION, _v11_search_words

BLOB = base64.b64encode(bytes(range(256)) * 4).decode()
# FTS5's default tokenizer splits base64 at "+", "/" and "=": each piece was a findable word.
BLOB_WORDS = [w for w in re.split(r"[+/=]", BLOB) if len(w) > 3]

TOOL_TURN = [{"type": "text", "text": "Checking the notes"},
             {"type": "thinking", "thinking": "hmm", "signature": "EqQBCkYIBxgCKkBsignature"},
             {"type": "tool_use", "id": "toolu_01", "name": "read_file",
              "input": {"path": "plans/zeppelin.md"}}]
RESULT_TURN = [{"type": "tool_result", "tool_use_id": "toolu_01",
                "content": [{"type": "text", "text": "hangar doors open at dawn"},
                            {"type": "image", "source": {"type": "base64",
                                                         "media_type": "image/png",
                                                         "data": BLOB}}]}]
JSON_ONLY_WORDS = ["type", "text", "tool_use", "tool_result", "input", "path", "id", "toolu_01",
                   "tool_use_id", "content", "source", "base64", "media_type", "image", "png",
                   "data", "thinking", "signature", "EqQBCkYIBxgCKkBsignature"]


def _ids(conversations) -> list[int]:
    return [c.id for c in conversations]


@pytest.fixture
def talk(db):
    repo = ConversationRepository(db)
    conv = repo.create(title="airship")
    repo.append(conv.id, "user", [{"type": "text", "text": "what do the notes say?"}])
    repo.append(conv.id, "assistant", TOOL_TURN)
    repo.append(conv.id, "user", RESULT_TURN)
    return repo, conv


@pytest.mark.parametrize("word", JSON_ONLY_WORDS)
def test_json_keys_block_types_and_signatures_are_not_found(talk, word):
    repo, _ = talk
    assert repo.search(word) == []


@pytest.mark.parametrize("words", ["notes say", "checking", "read_file", "zeppelin",
                                   "plans zeppelin md", "hangar dawn"])
def test_text_tool_names_inputs_and_results_are_found(talk, words):
    repo, conv = talk
    assert _ids(repo.search(words)) == [conv.id]


def test_a_base64_attachment_is_not_indexed(talk):
    repo, _ = talk
    assert BLOB_WORDS and all(repo.search(word) == [] for word in BLOB_WORDS)


def _assert_index_matches(db, fts: str, columns: str, source: str) -> None:
    """The index ``fts`` holds exactly the tokens (term, row, column, position) a fresh index
    built from ``source`` would: FTS5's own integrity check does not compare an external
    content index with its content (SQLite 3.40), this does."""
    conn = db.conn
    conn.execute(f"CREATE VIRTUAL TABLE temp.fresh USING fts5({columns})")
    conn.execute(f"INSERT INTO temp.fresh (rowid, {columns}) {source}")
    conn.execute(f"CREATE VIRTUAL TABLE temp.kept_terms USING fts5vocab(main, {fts}, instance)")
    conn.execute("CREATE VIRTUAL TABLE temp.fresh_terms USING fts5vocab(temp, fresh, instance)")
    try:
        def terms(table: str) -> list[tuple]:
            return conn.execute(f"SELECT term, doc, col, offset FROM temp.{table}"
                                " ORDER BY 1, 2, 3, 4").fetchall()

        assert terms("kept_terms") == terms("fresh_terms")
        conn.execute(f"INSERT INTO {fts}({fts}) VALUES('integrity-check')")
    finally:
        for table in ("kept_terms", "fresh_terms", "fresh"):
            conn.execute(f"DROP TABLE temp.{table}")


def _assert_message_index_matches(db) -> None:
    _assert_index_matches(db, "messages_fts", "search_text",
                          "SELECT id, search_text FROM messages")


def _assert_audit_index_matches(db) -> None:
    _assert_index_matches(db, "tool_executions_fts", "tool_name, input, output",
                          "SELECT id, tool_name, input, output FROM tool_executions_search")


def test_the_index_stays_consistent_through_appends_and_forks(talk, db):
    repo, conv = talk
    _assert_message_index_matches(db)
    first = repo.append(conv.id, "user", "regenerate this please")
    assert _ids(repo.search("regenerate")) == [conv.id]
    repo.delete_from(conv.id, first)
    assert repo.search("regenerate") == []
    _assert_message_index_matches(db)
    repo.delete(conv.id)
    assert repo.search("zeppelin") == []
    _assert_message_index_matches(db)


_BLOCKS = st.lists(st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=30)}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": st.text(max_size=8),
                           "name": st.text(max_size=10),
                           "input": st.dictionaries(st.text(max_size=6),
                                                    st.text(max_size=20), max_size=3)}),
    st.fixed_dictionaries({"type": st.just("tool_result"), "tool_use_id": st.text(max_size=8),
                           "content": st.text(max_size=30)}),
    st.dictionaries(st.text(max_size=6), st.text(max_size=10), max_size=3)), max_size=4)


# The db fixture is shared by the examples on purpose: each checks the whole index.
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=_BLOCKS | st.text(max_size=40), query=st.text(max_size=12))
def test_any_message_is_stored_with_its_words_and_indexed_consistently(db, content, query):
    repo = ConversationRepository(db)
    conv = repo.create()
    message_id = repo.append(conv.id, "assistant", content)
    stored, words = db.conn.execute("SELECT content, search_text FROM messages WHERE id = ?",
                                    (message_id,)).fetchone()
    assert words == search_text_module.searchable_text(json.loads(stored))
    assert isinstance(repo.search(query), list)
    _assert_message_index_matches(db)


# The audit trail: a call's input is searched by its values, never its keys.

def test_audit_input_keys_are_not_found_its_values_are(db):
    audit = AuditRepository(db)
    row = audit.record(tool_name="web_fetch", server_id="builtin",
                       tool_input={"url": "https://example.org/zeppelin", "headers":
                                   {"accept": "text/html"}, "max_bytes": 5000},
                       decision="allow", outcome=Outcome.EXECUTED, output="hangar doors")
    for words in ("web_fetch", "zeppelin", "example org", "html", "hangar"):
        assert [e.id for e in audit.search(words)] == [row], words
    for word in ("url", "headers", "accept", "max_bytes", "5000"):
        assert audit.search(word) == [], word
    _assert_audit_index_matches(db)


def test_the_audit_index_follows_a_call_through_its_life_and_deletion(db):
    audit = AuditRepository(db)
    kept = audit.record(tool_name="read_file", server_id="builtin",
                        tool_input={"path": "notes.md"}, decision="allow",
                        outcome=Outcome.EXECUTED, output="kept words")
    row = audit.begin(tool_name="shell_exec", server_id="builtin",
                      tool_input={"command": "make tarball"}, decision="ask",
                      state=CallState.PENDING)
    audit.set_state(row, CallState.RUNNING)
    audit.set_reviews(row, [{"verdict": "allow"}])
    audit.set_changes(row, {"files": ["a.txt"]})
    _assert_audit_index_matches(db)
    audit.finish(row, tool_name="shell_exec", server_id="builtin",
                 tool_input={"command": "make tarball"}, decision="allow",
                 outcome=Outcome.EXECUTED, output="built relic.tar")
    assert [e.id for e in audit.search("tarball relic")] == [row]
    _assert_audit_index_matches(db)
    # Written behind the repository's back: the triggers keep the index.
    db.conn.execute("UPDATE tool_executions SET input = ? WHERE id = ?",
                    ('{"command": "make zipfile"}', row))
    assert audit.search("tarball") == []
    assert [e.id for e in audit.search("zipfile")] == [row]
    db.conn.execute("DELETE FROM tool_executions WHERE id = ?", (row,))
    assert audit.search("zipfile") == [] and audit.search("relic") == []
    assert [e.id for e in audit.search("kept")] == [kept]
    _assert_audit_index_matches(db)


def test_an_audit_input_of_any_json_shape_is_indexed_without_error(db):
    audit = AuditRepository(db)
    shapes = ["just a string", 42, None, ["list", {"nested": ["deep words"]}], {}]
    rows = [audit.record(tool_name="t", server_id="builtin", tool_input=shape,
                         decision="deny", outcome=Outcome.DENIED) for shape in shapes]
    assert [e.id for e in audit.search("string")] == [rows[0]]
    assert [e.id for e in audit.search("deep words")] == [rows[3]]
    assert audit.search("nested") == []
    _assert_audit_index_matches(db)


# Migration 11 on a database made before it.

_MINE = MIGRATIONS.index(_v11_search_words)  # the migrations before it

OLD_MESSAGES = [
    ("user", '[{"type": "text", "text": "ancient words"}]'),
    ("assistant", '[{"type": "tool_use", "id": "toolu_9", "name": "shell_exec",'
                  ' "input": {"command": "make tarball"}}]'),
    ("user", '[{"type": "tool_result", "tool_use_id": "toolu_9", "content": "relic built"}]'),
    ("user", '"a plain string message"'),
    ("user", '[1, {"odd": "shape"}, "loose words"]'),
]


def _old_database(path, monkeypatch) -> None:
    """A database at the version before migration 11, holding OLD_MESSAGES."""
    with monkeypatch.context() as patch:
        patch.setattr(db_module, "MIGRATIONS", MIGRATIONS[:_MINE])
        patch.setattr(db_module, "SCHEMA_VERSION", _MINE)
        old = open_database(path)
    try:
        conv = old.conn.execute("INSERT INTO conversations (title, created_at, updated_at)"
                                " VALUES ('old talk', 'x', 'x')").lastrowid
        old.conn.executemany(
            "INSERT INTO messages (conversation_id, role, content, created_at)"
            " VALUES (?, ?, ?, 'x')", [(conv, role, content) for role, content in OLD_MESSAGES])
        old.conn.execute("INSERT INTO tool_executions (tool_name, input, decision, outcome,"
                         " created_at) VALUES ('grep_search', '{\"pattern\": \"relic\"}',"
                         " 'allow', 'executed', 'x')")
        # The old index searched the JSON: the bug this migration fixes.
        assert old.conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH"
                                " 'type'").fetchone()[0] == 3
    finally:
        old.close()


def test_migration_12_reindexes_existing_messages_by_their_words(fresh_data_dir, monkeypatch):
    path = fresh_data_dir / "old.sqlite3"
    _old_database(path, monkeypatch)

    db = open_database(path)
    try:
        assert schema_version(db) == SCHEMA_VERSION
        repo = ConversationRepository(db)
        for words in ("ancient", "shell_exec", "tarball", "relic", "plain string",
                      "loose words"):
            assert [c.title for c in repo.search(words)] == ["old talk"], words
        for word in ("type", "text", "tool_use", "input", "command", "toolu_9", "odd"):
            assert repo.search(word) == [], word
        audit = AuditRepository(db)
        assert [e.tool_name for e in audit.search("relic")] == ["grep_search"]
        assert audit.search("pattern") == []  # the input's key, indexed before
        _assert_message_index_matches(db)
        _assert_audit_index_matches(db)
        # New messages after the upgrade are indexed the same way.
        conv = repo.search("ancient")[0]
        repo.append(conv.id, "assistant", [{"type": "text", "text": "fresh words"}])
        assert _ids(repo.search("fresh")) == [conv.id]
    finally:
        db.close()


def test_a_crash_during_migration_12_loses_nothing(fresh_data_dir, monkeypatch):
    path = fresh_data_dir / "old.sqlite3"
    _old_database(path, monkeypatch)
    calls = []

    def power_cut(content):
        calls.append(content)
        if len(calls) == 3:
            raise RuntimeError("power cut")
        return "partial"

    with monkeypatch.context() as patch:
        patch.setattr(search_text_module, "searchable_text", power_cut)
        with pytest.raises(RuntimeError, match="power cut"):
            open_database(path)

    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == _MINE
        columns = [row[1] for row in conn.execute("PRAGMA table_info(messages)")]
        assert "search_text" not in columns
        # The old index and its triggers are all there: the version before still works.
        assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH"
                            " 'ancient'").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'"
                            " AND name LIKE 'messages_a_'").fetchone()[0] == 3
        assert conn.execute("SELECT count(*) FROM tool_executions_fts WHERE"
                            " tool_executions_fts MATCH 'pattern'").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE"
                            " name = 'tool_executions_search'").fetchone()[0] == 0
    finally:
        conn.close()

    db = open_database(path)  # the next start migrates from the start
    try:
        assert [c.title for c in ConversationRepository(db).search("relic")] == ["old talk"]
        assert ConversationRepository(db).search("type") == []
    finally:
        db.close()
