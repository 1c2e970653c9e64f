"""Orchestration runs and their sub-agent executions (app.core.agent.sub_agents).

A run belongs to one conversation and has a mode: ``auto`` (children run when the model starts
them) or ``approval`` (each child waits for the person; the run is ``paused`` meanwhile, also
across a restart). An execution is one child's run: its definition, the input its parent gave
it, its status, its summary, the facts recorded about it (calls declined, files changed) and
its tokens and cost.
"""

from __future__ import annotations

import builtins
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from app.core.store.db import store_of, utc_now

if TYPE_CHECKING:  # only annotations name the store
    from app.core.store.db import Database

RunMode = Literal["auto", "approval"]
RunStatus = Literal["running", "paused", "done", "failed", "cancelled"]
ExecutionStatus = Literal["awaiting_approval", "working", "needs_input", "done", "failed",
                          "cancelled"]
FINISHED: frozenset[str] = frozenset({"done", "failed", "cancelled"})


@dataclass(frozen=True)
class OrchestrationRun:
    id: int
    conversation_id: int
    mode: RunMode
    status: RunStatus
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class Execution:
    id: int
    run_id: int
    tool_use_id: str
    agent_name: str
    chain: str
    definition: dict[str, Any]
    input: str
    background: bool
    status: ExecutionStatus
    child_conversation_id: int | None
    summary: str
    facts: dict[str, Any] | None
    input_tokens: int
    output_tokens: int
    cost_usd: float
    created_at: str
    started_at: str | None
    finished_at: str | None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


_RUN_COLUMNS = "id, conversation_id, mode, status, created_at, updated_at"
_EXECUTION_COLUMNS = ("id, run_id, tool_use_id, agent_name, chain, definition, input, background,"
                      " status, child_conversation_id, summary, facts, input_tokens,"
                      " output_tokens, cost_usd, created_at, started_at, finished_at")


def _execution(row: tuple[Any, ...]) -> Execution:
    values = list(row)
    values[5] = json.loads(values[5])
    values[7] = bool(values[7])
    values[11] = json.loads(values[11]) if values[11] is not None else None
    return Execution(*values)


class OrchestrationRepository:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.store = store_of(db)

    # -- runs ------------------------------------------------------------------------------

    def create_run(self, conversation_id: int, mode: RunMode) -> OrchestrationRun:
        now = utc_now()
        with self.store.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO orchestration_runs (conversation_id, mode, status, created_at,"
                " updated_at) VALUES (?, ?, 'running', ?, ?)", (conversation_id, mode, now, now))
        assert cur.lastrowid is not None
        return OrchestrationRun(cur.lastrowid, conversation_id, mode, "running", now, now)

    def run(self, run_id: int) -> OrchestrationRun:
        with self.store.lock:
            row = self.db.conn.execute(
                f"SELECT {_RUN_COLUMNS} FROM orchestration_runs WHERE id = ?",
                (run_id,)).fetchone()
        if row is None:
            raise KeyError(run_id)
        return OrchestrationRun(*row)

    def runs_for(self, conversation_id: int) -> builtins.list[OrchestrationRun]:
        with self.store.lock:
            rows = self.db.conn.execute(
                f"SELECT {_RUN_COLUMNS} FROM orchestration_runs WHERE conversation_id = ?"
                " ORDER BY id", (conversation_id,)).fetchall()
        return [OrchestrationRun(*r) for r in rows]

    def runs_with_status(self, status: RunStatus) -> builtins.list[OrchestrationRun]:
        with self.store.lock:
            rows = self.db.conn.execute(
                f"SELECT {_RUN_COLUMNS} FROM orchestration_runs WHERE status = ? ORDER BY id",
                (status,)).fetchall()
        return [OrchestrationRun(*r) for r in rows]

    def set_run_status(self, run_id: int, status: RunStatus) -> None:
        with self.store.transaction() as conn:
            conn.execute("UPDATE orchestration_runs SET status = ?, updated_at = ? WHERE id = ?",
                         (status, utc_now(), run_id))

    # -- executions ------------------------------------------------------------------------

    def add_execution(self, run_id: int, *, tool_use_id: str, agent_name: str, chain: str,
                      definition: dict[str, Any], input: str, background: bool,
                      status: ExecutionStatus) -> Execution:
        now = utc_now()
        with self.store.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO sub_agent_executions (run_id, tool_use_id, agent_name, chain,"
                " definition, input, background, status, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, tool_use_id, agent_name, chain, json.dumps(definition), input,
                 int(background), status, now))
        assert cur.lastrowid is not None
        return self.execution(cur.lastrowid)

    def execution(self, execution_id: int) -> Execution:
        with self.store.lock:
            row = self.db.conn.execute(
                f"SELECT {_EXECUTION_COLUMNS} FROM sub_agent_executions WHERE id = ?",
                (execution_id,)).fetchone()
        if row is None:
            raise KeyError(execution_id)
        return _execution(row)

    def executions(self, run_id: int) -> builtins.list[Execution]:
        with self.store.lock:
            rows = self.db.conn.execute(
                f"SELECT {_EXECUTION_COLUMNS} FROM sub_agent_executions WHERE run_id = ?"
                " ORDER BY id", (run_id,)).fetchall()
        return [_execution(r) for r in rows]

    def count_for_conversation(self, conversation_id: int) -> int:
        """How many children the conversation's runs have started (the per-conversation
        limit counts every one, finished or not)."""
        with self.store.lock:
            row = self.db.conn.execute(
                "SELECT count(*) FROM sub_agent_executions e JOIN orchestration_runs r"
                " ON e.run_id = r.id WHERE r.conversation_id = ?",
                (conversation_id,)).fetchone()
        return int(row[0])

    def started(self, execution_id: int, child_conversation_id: int | None) -> None:
        with self.store.transaction() as conn:
            conn.execute("UPDATE sub_agent_executions SET status = 'working', started_at = ?,"
                         " child_conversation_id = coalesce(?, child_conversation_id)"
                         " WHERE id = ?", (utc_now(), child_conversation_id, execution_id))

    def set_status(self, execution_id: int, status: ExecutionStatus) -> None:
        with self.store.transaction() as conn:
            conn.execute("UPDATE sub_agent_executions SET status = ? WHERE id = ?",
                         (status, execution_id))

    def set_child_conversation(self, execution_id: int, conversation_id: int) -> None:
        with self.store.transaction() as conn:
            conn.execute("UPDATE sub_agent_executions SET child_conversation_id = ?"
                         " WHERE id = ?", (conversation_id, execution_id))

    def finish(self, execution_id: int, status: ExecutionStatus, *, summary: str,
               facts: dict[str, Any], input_tokens: int, output_tokens: int,
               cost_usd: float) -> None:
        with self.store.transaction() as conn:
            conn.execute(
                "UPDATE sub_agent_executions SET status = ?, summary = ?, facts = ?,"
                " input_tokens = ?, output_tokens = ?, cost_usd = ?, finished_at = ?"
                " WHERE id = ?",
                (status, summary, json.dumps(facts), input_tokens, output_tokens,
                 max(0.0, cost_usd), utc_now(), execution_id))

    def settle_run(self, run_id: int) -> RunStatus:
        """The run's status from its children: paused while one awaits approval, running
        while one works, else done (cancelled when every child was)."""
        with self.store.transaction() as conn:
            statuses = {row[0] for row in conn.execute(
                "SELECT status FROM sub_agent_executions WHERE run_id = ?", (run_id,))}
            status: RunStatus = (
                "paused" if "awaiting_approval" in statuses else
                "running" if statuses & {"working", "needs_input"} else
                "cancelled" if statuses == {"cancelled"} else "done")
            conn.execute("UPDATE orchestration_runs SET status = ?, updated_at = ? WHERE id = ?",
                         (status, utc_now(), run_id))
        return status

    def interrupt_unfinished(self) -> int:
        """At start-up: children that were working when the app stopped are failed (their
        processes are gone); runs that were running are failed too. Paused runs and the
        children awaiting approval stay: they resume on the person's approval."""
        with self.store.transaction() as conn:
            cur = conn.execute(
                "UPDATE sub_agent_executions SET status = 'failed', finished_at = ?,"
                " summary = CASE WHEN summary = '' THEN 'Interrupted: the app stopped while"
                " this sub-agent was working.' ELSE summary END"
                " WHERE status IN ('working', 'needs_input')", (utc_now(),))
            conn.execute("UPDATE orchestration_runs SET status = 'failed', updated_at = ?"
                         " WHERE status = 'running'", (utc_now(),))
        return cur.rowcount
