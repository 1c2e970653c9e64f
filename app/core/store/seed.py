"""Data written once, when the database is created."""

from __future__ import annotations

import sqlite3

# DESIGN §3: read-only built-ins are allowed, git read actions too; everything else asks.
READ_ONLY_BUILTINS = ("read_file", "glob_search", "grep_search", "web_fetch", "web_search")
GIT_READ_ACTIONS = ("status", "diff", "log", "show", "branch_list")
DEFAULT_ASK_PRIORITY = -1000


def seed_default_rules(conn: sqlite3.Connection, now: str) -> None:
    rows: list[tuple] = []
    for name in READ_ONLY_BUILTINS:
        rows.append(("builtin", name, None, "allow", 0, f"{name} is read-only"))
    for action in GIT_READ_ACTIONS:
        rows.append(("builtin", "git_ops", action, "allow", 0, f"git {action} only reads"))
    rows.append((None, None, None, "ask", DEFAULT_ASK_PRIORITY,
                 "Everything else asks before it runs"))
    conn.executemany(
        "INSERT INTO tool_permission_rules (server_id, tool_name, input_pattern, decision,"
        " auto_approve, priority, description, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(s, t, i, d, int(d == "allow"), p, desc, now, now) for s, t, i, d, p, desc in rows],
    )
