"""Forward-only schema migrations, versioned by ``PRAGMA user_version``.

Each migration is applied in its own transaction together with the version bump, so a crash
mid-migration leaves the database at the previous version, never half-migrated.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from app.core.settings_fields import PENDING_NOTICES
from app.core.store.sql_script import _fts_sql, split_sql

if TYPE_CHECKING:  # the store opens without sqlite-utils (app.core.store.db.Database)
    import sqlite_utils

# CHECK constraints make invalid rows impossible even for code that bypasses the repositories.
_V1 = """
CREATE TABLE settings (
    key         TEXT PRIMARY KEY CHECK (length(key) > 0),
    value       TEXT NOT NULL CHECK (json_valid(value)),
    updated_at  TEXT NOT NULL
);

CREATE TABLE agent_profiles (
    id              INTEGER PRIMARY KEY,
    name            TEXT NOT NULL UNIQUE CHECK (length(trim(name)) > 0),
    system_prompt   TEXT NOT NULL DEFAULT '',
    provider        TEXT NOT NULL DEFAULT 'anthropic'
                    CHECK (provider IN ('anthropic', 'openai_compatible')),
    model           TEXT NOT NULL CHECK (length(model) > 0),
    base_url        TEXT,
    temperature     REAL NOT NULL DEFAULT 1.0 CHECK (temperature >= 0 AND temperature <= 2),
    max_tokens      INTEGER NOT NULL DEFAULT 8192
                    CHECK (typeof(max_tokens) = 'integer' AND max_tokens > 0),
    max_iterations  INTEGER NOT NULL DEFAULT 20
                    CHECK (typeof(max_iterations) = 'integer' AND max_iterations > 0),
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);

CREATE TABLE agent_tool_permissions (
    id          INTEGER PRIMARY KEY,
    agent_id    INTEGER NOT NULL REFERENCES agent_profiles(id) ON DELETE CASCADE,
    tool_name   TEXT NOT NULL CHECK (length(tool_name) > 0),
    is_enabled  INTEGER NOT NULL DEFAULT 0 CHECK (is_enabled IN (0, 1)),
    config      TEXT CHECK (config IS NULL OR
                            (json_valid(config) AND json_type(config) = 'object')),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (agent_id, tool_name)
);
CREATE INDEX idx_agent_tool_permissions_agent ON agent_tool_permissions(agent_id);

CREATE TABLE tool_permission_rules (
    id             INTEGER PRIMARY KEY,
    server_id      TEXT CHECK (server_id IS NULL OR length(server_id) > 0),
    tool_name      TEXT CHECK (tool_name IS NULL OR length(tool_name) > 0),
    tool_pattern   TEXT CHECK (tool_pattern IS NULL OR length(tool_pattern) > 0),
    input_pattern  TEXT CHECK (input_pattern IS NULL OR length(input_pattern) > 0),
    decision       TEXT NOT NULL CHECK (decision IN ('allow', 'ask', 'deny')),
    auto_approve   INTEGER NOT NULL CHECK (auto_approve = (decision = 'allow')),
    priority       INTEGER NOT NULL DEFAULT 0 CHECK (typeof(priority) = 'integer'),
    description    TEXT NOT NULL DEFAULT '',
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    CHECK (tool_name IS NULL OR tool_pattern IS NULL)
);

CREATE TABLE conversations (
    id            INTEGER PRIMARY KEY,
    agent_id      INTEGER REFERENCES agent_profiles(id) ON DELETE SET NULL,
    title         TEXT NOT NULL DEFAULT '',
    project_root  TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);

CREATE TABLE messages (
    id               INTEGER PRIMARY KEY,
    conversation_id  INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role             TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content          TEXT NOT NULL CHECK (json_valid(content)),
    created_at       TEXT NOT NULL
);
CREATE INDEX idx_messages_conversation ON messages(conversation_id, id);

CREATE TABLE tool_executions (
    id               INTEGER PRIMARY KEY,
    conversation_id  INTEGER REFERENCES conversations(id) ON DELETE SET NULL,
    tool_use_id      TEXT,
    tool_name        TEXT NOT NULL CHECK (length(tool_name) > 0),
    server_id        TEXT NOT NULL DEFAULT 'builtin',
    input            TEXT NOT NULL CHECK (json_valid(input)),
    output           TEXT,
    is_error         INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    decision         TEXT NOT NULL CHECK (decision IN ('allow', 'ask', 'deny')),
    outcome          TEXT NOT NULL DEFAULT 'executed'
                     CHECK (outcome IN ('executed', 'declined', 'denied', 'cancelled', 'invalid')),
    rule_id          INTEGER REFERENCES tool_permission_rules(id) ON DELETE SET NULL,
    duration_ms      INTEGER CHECK (duration_ms IS NULL OR duration_ms >= 0),
    created_at       TEXT NOT NULL
);
CREATE INDEX idx_tool_executions_created ON tool_executions(created_at);
CREATE INDEX idx_tool_executions_tool ON tool_executions(tool_name);
"""

# A call is recorded when it is requested and updated when it ends, so a call the app never
# finished (killed while the approval was pending, or while the tool ran) is still on record.
# ``state``: pending (waiting for approval), running (started), done. ``owner`` is the process
# that wrote the row: a pending or running row whose owner is gone was interrupted
# (app.core.store.audit). Existing rows are finished calls, hence the default.
_V2 = """
ALTER TABLE tool_executions ADD COLUMN state TEXT NOT NULL DEFAULT 'done'
    CHECK (state IN ('pending', 'running', 'done'));
ALTER TABLE tool_executions ADD COLUMN owner TEXT;
CREATE INDEX idx_tool_executions_conversation ON tool_executions(conversation_id, tool_use_id);
"""

# Full-text search over titles, messages and the audit trail: FTS5 tables and the
# insert/update/delete triggers that keep them in step with every write (however it is made:
# repositories, raw SQL, another process). Applied inside the migration's transaction, so the
# schema version and the index appear together or not at all. Message content and tool input
# are indexed as the stored JSON text (migration 11 re-indexes their words instead:
# app.core.store.search_index).
#
# The statements are those sqlite-utils' ``Table.enable_fts(columns, fts_version="FTS5",
# create_triggers=True)`` runs (the version in requirements.lock, which applied this migration
# before), character for character, so a new database has the schema such a database has;
# tests/unit/test_store_fts.py compares the two. Plain SQL: creating a database does not import
# sqlite-utils.
_FTS_COLUMNS = {
    "conversations": ("title",),
    "messages": ("content",),
    "tool_executions": ("tool_name", "input", "output"),
}


_V3 = "".join(_fts_sql(table, columns) for table, columns in _FTS_COLUMNS.items())

# A migration is SQL (run statement by statement) or a function given the database
# (app.core.store.db.Database); either runs inside the transaction that bumps
# ``PRAGMA user_version``.
Migration = str | Callable[["sqlite_utils.Database"], None]


def _v4_seeded_default_rules_sql() -> str:
    """The record of which tool default rules a database has been given (``key``:
    ``server_id:tool_name:decision:input_pattern``).

    Tools' default rules are added at every start when their key is not recorded, and recorded
    when added (app.core.permissions.repository.RuleRepository.seed_defaults), so a rule the
    person deleted or edited is never added again. The rules the first migration wrote are
    recorded here whether or not they still exist: the person may have deleted or edited them.
    """
    from app.core.store.seed import FIRST_RUN_TOOL_RULES

    values = ",\n".join(
        f"('{server_id}:{tool}:{decision}:{pattern or ''}')"
        for server_id, tool, pattern, decision, _priority, _description in FIRST_RUN_TOOL_RULES)
    return f"""
CREATE TABLE seeded_default_rules (
    key        TEXT PRIMARY KEY CHECK (length(key) > 0),
    seeded_at  TEXT NOT NULL
);
INSERT INTO seeded_default_rules (key, seeded_at)
SELECT column1, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM (VALUES
{values});
"""


_V4 = _v4_seeded_default_rules_sql()

# What a call changed in the project folder, from the checkpoints around it
# (app.core.agent.checkpointing.CallChanges.to_json: the two checkpoint ids and the files), so
# "Undo this call" and "Restore to before this message" work after a restart too.
_V5 = """
ALTER TABLE tool_executions ADD COLUMN changes TEXT;
"""


# Permission modes and conversation flow (app.core.permissions.flow):
# - ``agent_profiles.permission_mode``: what the profile does with a call no rule decides;
# - ``tool_permission_rules.ignore_flow``: a rule that explicitly opts out of the flow guard;
# - ``conversations.flow``: the conversation's flow labels (what it has read), kept across
#   restarts;
# - ``tool_executions.decided_by``: which rule, mode fact or flow guard decided a call.
# And the default rules that leaked: the unconditional "read anything" allows of the read
# tools and the catch-all ask (the profile's mode answers when no rule matches) are removed
# where the person never edited them (created_at = updated_at and the shipped values); the
# read tools bring project-scoped defaults instead (their DefaultRule, added at start).
_V6_SQL = """
ALTER TABLE agent_profiles ADD COLUMN permission_mode TEXT NOT NULL DEFAULT 'ask'
    CHECK (permission_mode IN ('ask', 'auto', 'plan'));
ALTER TABLE tool_permission_rules ADD COLUMN ignore_flow INTEGER NOT NULL DEFAULT 0
    CHECK (ignore_flow IN (0, 1));
ALTER TABLE conversations ADD COLUMN flow TEXT CHECK (flow IS NULL OR json_valid(flow));
ALTER TABLE tool_executions ADD COLUMN decided_by TEXT;
"""

# The leaking defaults as shipped: (tool_name, decision, priority, description), server
# builtin, no patterns.
LEAKING_DEFAULT_RULES: tuple[tuple[str | None, str, int, str], ...] = (
    *((name, "allow", 0, f"{name} is read-only")
      for name in ("read_file", "glob_search", "grep_search", "list_directory")),
)
CATCH_ALL_ASK = (None, "ask", -1000, "Everything else asks before it runs")


DEFAULTS_CHANGED_NOTICE = (
    "Permission defaults changed: reading files is now allowed without asking only inside the "
    "open project; reads elsewhere, and of sensitive files such as keys, credentials and .env "
    "files, ask first. Calls that send data out ask after the conversation has read a secret. "
    "Rules you created or edited were not changed.")


def _v6_modes_and_flow(db: sqlite_utils.Database) -> None:
    conn = db.conn
    existing = conn.execute("SELECT count(*) FROM agent_profiles").fetchone()[0] > 0
    for statement in split_sql(_V6_SQL):
        conn.execute(statement)
    removed = 0
    for tool, decision, priority, description in (*LEAKING_DEFAULT_RULES, CATCH_ALL_ASK):
        server = "builtin" if tool is not None else None
        cur = conn.execute(
            "DELETE FROM tool_permission_rules WHERE server_id IS ? AND tool_name IS ?"
            " AND tool_pattern IS NULL AND input_pattern IS NULL AND decision = ?"
            " AND priority = ? AND description = ? AND created_at = updated_at",
            (server, tool, decision, priority, description))
        removed += cur.rowcount
    if existing and removed:
        row = conn.execute("SELECT value FROM settings WHERE key = ?",
                           (PENDING_NOTICES.key,)).fetchone()
        notices = [*PENDING_NOTICES.value_of(json.loads(row[0]) if row else None),
                   DEFAULTS_CHANGED_NOTICE]
        conn.execute(
            "INSERT INTO settings (key, value, updated_at) VALUES (?, ?,"
            " strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) ON CONFLICT(key) DO UPDATE SET"
            " value = excluded.value, updated_at = excluded.updated_at",
            (PENDING_NOTICES.key, json.dumps(notices)))


# Quorum review (app.core.review): a rule decision ``review`` (the table is rebuilt: SQLite
# cannot change a CHECK constraint in place; ids, times and order are kept), the profile
# options "review before asking me" and "review the plan", and the reviews of each call
# (JSON: reviewer, model, verdict, risk, rationale, tokens, latency) with its audit row.
_V7 = """
CREATE TABLE tool_permission_rules_v7 (
    id             INTEGER PRIMARY KEY,
    server_id      TEXT CHECK (server_id IS NULL OR length(server_id) > 0),
    tool_name      TEXT CHECK (tool_name IS NULL OR length(tool_name) > 0),
    tool_pattern   TEXT CHECK (tool_pattern IS NULL OR length(tool_pattern) > 0),
    input_pattern  TEXT CHECK (input_pattern IS NULL OR length(input_pattern) > 0),
    decision       TEXT NOT NULL CHECK (decision IN ('allow', 'ask', 'deny', 'review')),
    auto_approve   INTEGER NOT NULL CHECK (auto_approve = (decision = 'allow')),
    priority       INTEGER NOT NULL DEFAULT 0 CHECK (typeof(priority) = 'integer'),
    description    TEXT NOT NULL DEFAULT '',
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    ignore_flow    INTEGER NOT NULL DEFAULT 0 CHECK (ignore_flow IN (0, 1)),
    CHECK (tool_name IS NULL OR tool_pattern IS NULL)
);
INSERT INTO tool_permission_rules_v7 (id, server_id, tool_name, tool_pattern, input_pattern,
    decision, auto_approve, priority, description, created_at, updated_at, ignore_flow)
SELECT id, server_id, tool_name, tool_pattern, input_pattern, decision, auto_approve, priority,
    description, created_at, updated_at, ignore_flow FROM tool_permission_rules;
DROP TABLE tool_permission_rules;
ALTER TABLE tool_permission_rules_v7 RENAME TO tool_permission_rules;
ALTER TABLE agent_profiles ADD COLUMN review_before_asking INTEGER NOT NULL DEFAULT 0
    CHECK (review_before_asking IN (0, 1));
ALTER TABLE agent_profiles ADD COLUMN review_plan INTEGER NOT NULL DEFAULT 0
    CHECK (review_plan IN (0, 1));
ALTER TABLE tool_executions ADD COLUMN reviews TEXT CHECK (reviews IS NULL OR json_valid(reviews));
"""

# Reasoning and cost per profile (app.core.agent.request_options): adaptive thinking
# and how its text is shown, the effort level, prompt caching and the cache's lifetime (1h
# for long approval waits). Values are checked by the CHECK constraints and again when read.
_V8 = """
ALTER TABLE agent_profiles ADD COLUMN thinking TEXT NOT NULL DEFAULT 'off'
    CHECK (thinking IN ('off', 'adaptive'));
ALTER TABLE agent_profiles ADD COLUMN thinking_display TEXT
    CHECK (thinking_display IS NULL OR thinking_display IN ('summarized', 'omitted'));
ALTER TABLE agent_profiles ADD COLUMN effort TEXT
    CHECK (effort IS NULL OR effort IN ('low', 'medium', 'high', 'xhigh', 'max'));
ALTER TABLE agent_profiles ADD COLUMN prompt_cache INTEGER NOT NULL DEFAULT 1
    CHECK (prompt_cache IN (0, 1));
ALTER TABLE agent_profiles ADD COLUMN cache_ttl TEXT NOT NULL DEFAULT '5m'
    CHECK (cache_ttl IN ('5m', '1h'));
"""

# Token usage of every model turn (app.core.store.usage), so a conversation's and a day's
# tokens and cost can be summed (and shown) after a restart too.
_V9 = """
CREATE TABLE turn_usage (
    id                  INTEGER PRIMARY KEY,
    conversation_id     INTEGER REFERENCES conversations(id) ON DELETE CASCADE,
    model               TEXT NOT NULL,
    input_tokens        INTEGER NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    output_tokens       INTEGER NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
    cache_write_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (cache_write_tokens >= 0),
    cache_read_tokens   INTEGER NOT NULL DEFAULT 0 CHECK (cache_read_tokens >= 0),
    cache_ttl           TEXT NOT NULL DEFAULT '5m',
    created_at          TEXT NOT NULL
);
CREATE INDEX idx_turn_usage_conversation ON turn_usage(conversation_id);
CREATE INDEX idx_turn_usage_created ON turn_usage(created_at);
"""

# The conversation list of a project folder (ConversationRepository.list_for_project): its
# rows newest first straight from the index (rowid, the id tie-break, is the index's last
# column), not a scan and sort of every conversation.
_V10 = """
CREATE INDEX idx_conversations_project ON conversations(project_root, updated_at);
"""


def _v11_search_words(db: sqlite_utils.Database) -> None:
    """Messages and the audit trail are searched by their words, not their JSON (block types,
    keys, signatures, base64): app.core.store.search_index."""
    from app.core.store.search_index import index_words_not_json

    index_words_not_json(db)


# Sub-agents (app.core.agent.sub_agents): a profile's orchestration choice; a child's own
# conversation (its full transcript, kept out of the conversation list by ``parent_id``); the
# orchestration runs of a conversation and the executions of their children, so a run paused
# for the person's approval resumes after a restart. (``parent_id`` is no foreign key, so the
# column can be dropped like the others; ConversationRepository.delete deletes the children.)
_V12 = """
ALTER TABLE agent_profiles ADD COLUMN orchestration TEXT NOT NULL DEFAULT 'none'
    CHECK (orchestration IN ('none', 'sub_agents', 'sub_agents_approval'));
ALTER TABLE conversations ADD COLUMN parent_id INTEGER;
CREATE INDEX idx_conversations_parent ON conversations(parent_id);

CREATE TABLE orchestration_runs (
    id               INTEGER PRIMARY KEY,
    conversation_id  INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    mode             TEXT NOT NULL CHECK (mode IN ('auto', 'approval')),
    status           TEXT NOT NULL
                     CHECK (status IN ('running', 'paused', 'done', 'failed', 'cancelled')),
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX idx_orchestration_runs_conversation ON orchestration_runs(conversation_id);

CREATE TABLE sub_agent_executions (
    id                     INTEGER PRIMARY KEY,
    run_id                 INTEGER NOT NULL REFERENCES orchestration_runs(id) ON DELETE CASCADE,
    tool_use_id            TEXT NOT NULL,
    agent_name             TEXT NOT NULL CHECK (length(agent_name) > 0),
    chain                  TEXT NOT NULL,
    definition             TEXT NOT NULL CHECK (json_valid(definition)),
    input                  TEXT NOT NULL,
    background             INTEGER NOT NULL DEFAULT 0 CHECK (background IN (0, 1)),
    status                 TEXT NOT NULL CHECK (status IN ('awaiting_approval', 'working',
                           'needs_input', 'done', 'failed', 'cancelled')),
    child_conversation_id  INTEGER REFERENCES conversations(id) ON DELETE SET NULL,
    summary                TEXT NOT NULL DEFAULT '',
    facts                  TEXT CHECK (facts IS NULL OR json_valid(facts)),
    input_tokens           INTEGER NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    output_tokens          INTEGER NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
    cost_usd               REAL NOT NULL DEFAULT 0 CHECK (cost_usd >= 0),
    created_at             TEXT NOT NULL,
    started_at             TEXT,
    finished_at            TEXT
);
CREATE INDEX idx_sub_agent_executions_run ON sub_agent_executions(run_id);
ALTER TABLE tool_executions ADD COLUMN agent TEXT NOT NULL DEFAULT '';
"""


# 13: the answers a regenerate set aside ("‹ 1/2 ›", app.core.store.answer_versions). A row per
# version of the answer to ``prompt_id``; ``messages`` NULL marks the version shown, whose
# messages are the conversation's own after the prompt.
_V13 = """
CREATE TABLE answer_versions (
    id               INTEGER PRIMARY KEY,
    conversation_id  INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    prompt_id        INTEGER NOT NULL,
    position         INTEGER NOT NULL CHECK (position >= 0),
    messages         TEXT CHECK (messages IS NULL OR
                                 (json_valid(messages) AND json_type(messages) = 'array')),
    created_at       TEXT NOT NULL,
    UNIQUE (conversation_id, prompt_id, position)
);
"""

# 14: what a call's card showed instead of its result (an MCP server's content for the user
# only, ``ToolResult.for_person``: ``{"text", "images"}``), so a reopened card shows it again.
_V14 = """ALTER TABLE tool_executions ADD COLUMN for_person TEXT
    CHECK (for_person IS NULL OR (json_valid(for_person) AND json_type(for_person) = 'object'));"""

MIGRATIONS: tuple[Migration, ...] = (_V1, _V2, _V3, _V4, _V5, _v6_modes_and_flow, _V7, _V8,
                                     _V9, _V10, _v11_search_words, _V12, _V13, _V14)

SCHEMA_VERSION = len(MIGRATIONS)
