"""Data written once, when the database is created."""

from __future__ import annotations

import sqlite3
from typing import Any

# everything asks unless a rule says otherwise; this is the lowest-priority rule.
DEFAULT_ASK_PRIORITY = -1000

# The tools' default rules that databases were created with before tools declared their own
# (``ToolSpec.default_rules``, added at start by app.core.services). Kept as history: new
# databases get the same rows, and migration 4 records them as given so they are not added
# twice. Change a tool's default rules in its module, never here.
# (server_id, tool_name, input_pattern, decision, priority, description)
_READ_ONLY_BUILTINS = ("read_file", "glob_search", "grep_search", "web_fetch", "web_search")
_GIT_READ_ACTIONS = ("status", "diff", "log", "show", "branch_list")
FIRST_RUN_TOOL_RULES: tuple[tuple[str, str, str | None, str, int, str], ...] = (
    *(("builtin", name, None, "allow", 0, f"{name} is read-only")
      for name in _READ_ONLY_BUILTINS),
    *(("builtin", "git_ops", action, "allow", 0, f"git {action} only reads")
      for action in _GIT_READ_ACTIONS),
)


def seed_default_rules(conn: sqlite3.Connection, now: str) -> None:
    rows: list[tuple[Any, ...]] = list(FIRST_RUN_TOOL_RULES)
    rows.append((None, None, None, "ask", DEFAULT_ASK_PRIORITY,
                 "Everything else asks before it runs"))
    conn.executemany(
        "INSERT INTO tool_permission_rules (server_id, tool_name, input_pattern, decision,"
        " auto_approve, priority, description, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(s, t, i, d, int(d == "allow"), p, desc, now, now) for s, t, i, d, p, desc in rows],
    )
