"""The audit trail: every tool call with its decision, deciding rule, outcome and timing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import sqlite_utils

from app.core.store.db import db_lock, transaction, utc_now

Outcome = Literal["executed", "declined", "denied", "cancelled", "invalid"]
_MAX_STORED_OUTPUT = 200_000


@dataclass(frozen=True)
class ToolExecution:
    id: int
    tool_name: str
    server_id: str
    input: Any
    output: str | None
    is_error: bool
    decision: str
    outcome: str
    rule_id: int | None
    duration_ms: int | None
    conversation_id: int | None
    tool_use_id: str | None
    created_at: str


_COLUMNS = ("id", "tool_name", "server_id", "input", "output", "is_error", "decision", "outcome",
            "rule_id", "duration_ms", "conversation_id", "tool_use_id", "created_at")


class AuditRepository:
    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db

    def record(
        self,
        *,
        tool_name: str,
        server_id: str,
        tool_input: Any,
        decision: str,
        outcome: Outcome,
        output: str | None = None,
        is_error: bool = False,
        rule_id: int | None = None,
        duration_ms: int | None = None,
        conversation_id: int | None = None,
        tool_use_id: str | None = None,
    ) -> int:
        if output is not None and len(output) > _MAX_STORED_OUTPUT:
            output = output[:_MAX_STORED_OUTPUT] + "\n[… truncated in the audit log]"
        with transaction(self.db) as conn:
            cur = conn.execute(
                "INSERT INTO tool_executions (tool_name, server_id, input, output, is_error,"
                " decision, outcome, rule_id, duration_ms, conversation_id, tool_use_id,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (tool_name, server_id, json.dumps(tool_input, ensure_ascii=False, default=str),
                 output, int(is_error), decision, outcome, rule_id,
                 None if duration_ms is None else max(0, int(duration_ms)), conversation_id,
                 tool_use_id, utc_now()))
            return int(cur.lastrowid)

    def list(
        self,
        *,
        tool_name: str | None = None,
        decision: str | None = None,
        errors_only: bool = False,
        limit: int = 500,
        offset: int = 0,
    ) -> list[ToolExecution]:
        where, params = [], []
        if tool_name:
            where.append("tool_name = ?")
            params.append(tool_name)
        if decision:
            where.append("decision = ?")
            params.append(decision)
        if errors_only:
            where.append("is_error = 1")
        sql = f"SELECT {', '.join(_COLUMNS)} FROM tool_executions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id DESC LIMIT ? OFFSET ?"
        with db_lock(self.db):
            rows = self.db.conn.execute(sql, (*params, limit, offset)).fetchall()
        return [self._row(r) for r in rows]

    def count(self) -> int:
        with db_lock(self.db):
            return int(self.db.conn.execute("SELECT count(*) FROM tool_executions").fetchone()[0])

    @staticmethod
    def _row(row: tuple) -> ToolExecution:
        values = dict(zip(_COLUMNS, row, strict=True))
        values["input"] = json.loads(values["input"])
        values["is_error"] = bool(values["is_error"])
        return ToolExecution(**values)
