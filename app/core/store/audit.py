"""The audit trail: every tool call with its decision, deciding rule, outcome and timing.

A call that waits (for approval) or runs is recorded *before* it does, with ``begin``, and
completed with ``finish``; a one-step call (denied, invalid, not run) is written whole with
``record``. A row still pending or running after its process is gone (the app was killed or
crashed) therefore reads as interrupted, never as done: ``ToolExecution.interrupted``.
"""

from __future__ import annotations

import builtins
import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.outcomes import CallState, Outcome, Verdict, result_label, verdict
from app.core.store.db import fts_match, store_of, utc_now

if TYPE_CHECKING:  # only annotations name the store
    from app.core.store.db import Database

_MAX_STORED_OUTPUT = 200_000


def _capped(output: str | None) -> str | None:
    """Tool output as stored: a huge result must not bloat the database."""
    if output is not None and len(output) > _MAX_STORED_OUTPUT:
        return output[:_MAX_STORED_OUTPUT] + "\n[… truncated in the audit log]"
    return output

# Which process wrote a pending/running row. Not the pid: pids are reused after a restart.
# 128 random bits as 32 hex digits (as uuid4().hex, without importing uuid and platform at
# start-up).
PROCESS_TOKEN = os.urandom(16).hex()

# What the transcript card and the tool history say about an interrupted call (one wording).
NOT_RUN_INTERRUPTED = "not run (interrupted)"
INTERRUPTED_WHILE_RUNNING = "interrupted while running"
INTERRUPTED_OUTPUT = ("The app stopped before this call finished; {what}. Its effects, if any, "
                      "are unknown.")
# A row written by ``begin`` holds these until ``finish``: whoever reads it without looking at
# ``state`` sees a cancelled error, never a successful execution.
_PLACEHOLDER_OUTCOME = Outcome.CANCELLED


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
    state: str = CallState.DONE
    # True when the row is pending or running but the process that wrote it is gone.
    interrupted: bool = False
    # What the call changed in the project (the checkpoints around it and the files), if it
    # was checkpointed: app.core.agent.checkpointing.CallChanges.to_json().
    changes: Any = None
    # Which rule, permission-mode fact or flow guard decided the call, in words.
    decided_by: str | None = None
    # The reviewer models' verdicts on the call, if it was reviewed (app.core.review; JSON).
    reviews: Any = None
    # The agent chain that made the call ("orchestrator › researcher-2"); "" for the
    # person's own agent (app.core.agent.agent_scope).
    agent: str = ""
    # What the card showed instead of ``output`` (content for the person only):
    # ``{"text": str, "images": [image blocks]}``. Read only with a conversation's calls.
    for_person: Any = None

    @property
    def status_label(self) -> str | None:
        """How to show a call that has not finished (None once it is done)."""
        if self.state == CallState.DONE:
            return None
        if self.interrupted:
            return NOT_RUN_INTERRUPTED if self.state == CallState.PENDING \
                else INTERRUPTED_WHILE_RUNNING
        return "waiting for approval" if self.state == CallState.PENDING else "running"

    @property
    def review_outcome(self) -> str | None:
        """approved | rejected | ask when the reviewers answered (the stored reviews)."""
        data = self.reviews
        if isinstance(data, dict) and data.get("outcome") in ("approved", "rejected", "ask"):
            return str(data["outcome"])
        return None

    @property
    def ran(self) -> bool:
        """The call started: it is running, it executed, or Stop cancelled it while it ran
        (a call stopped before it was reached has no duration)."""
        return self.state == CallState.RUNNING or (
            self.state == CallState.DONE and (
                self.outcome == Outcome.EXECUTED or
                (self.outcome == Outcome.CANCELLED and self.duration_ms is not None)))

    @property
    def verdict(self) -> Verdict:
        """Who let the call run or stopped it (``app.core.outcomes.verdict``)."""
        review = self.review_outcome
        if self.state == CallState.PENDING and review not in ("approved", "rejected") and \
                self.decision in ("ask", "review"):
            return Verdict.NOT_ANSWERED if self.interrupted else Verdict.WAITING
        return verdict(self.decision, self.decided_by, has_rule=self.rule_id is not None,
                       outcome=self.outcome if self.state == CallState.DONE else None,
                       ran=self.ran, review=review, output=self.output)

    @property
    def result_text(self) -> str:
        """What became of the call, in the cards' words ("done", "failed", "not run",
        "refused by capability", …), or how an unfinished one stands."""
        return self.status_label or result_label(self.outcome, self.is_error, ran=self.ran,
                                                 refused=self.verdict)


def decided_by_text(row: ToolExecution) -> str:
    """What decided the call, in words (recorded since permission modes exist); for an older
    row, the rule that decided it, if any."""
    if row.decided_by:
        return row.decided_by
    return f"rule #{row.rule_id}" if row.rule_id else ""


_COLUMNS = ("id", "tool_name", "server_id", "input", "output", "is_error", "decision", "outcome",
            "rule_id", "duration_ms", "conversation_id", "tool_use_id", "created_at", "state",
            "owner", "changes", "decided_by", "reviews", "agent")


class AuditRepository:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.store = store_of(db)

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
        decided_by: str | None = None,
        agent: str = "",
    ) -> int:
        output = _capped(output)
        # Raw SQL: one insert per tool call on the agent loop's path, where sqlite-utils'
        # insert would add its schema look-ups to every call.
        with self.store.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO tool_executions (tool_name, server_id, input, output, is_error,"
                " decision, outcome, rule_id, duration_ms, conversation_id, tool_use_id,"
                " created_at, decided_by, agent)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (tool_name, server_id, json.dumps(tool_input, ensure_ascii=False, default=str),
                 output, int(is_error), decision, outcome, rule_id,
                 None if duration_ms is None else max(0, int(duration_ms)), conversation_id,
                 tool_use_id, utc_now(), decided_by, agent))
            assert cur.lastrowid is not None  # set by every successful INSERT
            return cur.lastrowid

    def begin(
        self,
        *,
        tool_name: str,
        server_id: str,
        tool_input: Any,
        decision: str,
        state: CallState,
        rule_id: int | None = None,
        conversation_id: int | None = None,
        tool_use_id: str | None = None,
        decided_by: str | None = None,
        agent: str = "",
    ) -> int:
        """Record a call before it waits for approval (``pending``) or runs (``running``).
        Until ``finish``, it reads as cancelled, and as interrupted once this process is gone."""
        with self.store.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO tool_executions (tool_name, server_id, input, output, is_error,"
                " decision, outcome, rule_id, duration_ms, conversation_id, tool_use_id,"
                " created_at, state, owner, decided_by, agent)"
                " VALUES (?, ?, ?, NULL, 1, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?)",
                (tool_name, server_id, json.dumps(tool_input, ensure_ascii=False, default=str),
                 decision, _PLACEHOLDER_OUTCOME, rule_id, conversation_id, tool_use_id,
                 utc_now(), state, PROCESS_TOKEN, decided_by, agent))
            assert cur.lastrowid is not None
            return cur.lastrowid

    def set_changes(self, row_id: int, changes: Any) -> None:
        """Attach what a call changed (JSON) once its second checkpoint is taken."""
        with self.store.transaction() as conn:
            conn.execute("UPDATE tool_executions SET changes = ? WHERE id = ?",
                         (json.dumps(changes, ensure_ascii=False), row_id))

    def set_changes_of_call(self, conversation_id: int, tool_use_id: str, changes: Any) -> None:
        """Attach what a call changed through others (its sub-agents) to its latest row."""
        with self.store.transaction() as conn:
            conn.execute("UPDATE tool_executions SET changes = ? WHERE id = (SELECT MAX(id)"
                         " FROM tool_executions WHERE conversation_id = ? AND tool_use_id = ?)",
                         (json.dumps(changes, ensure_ascii=False), conversation_id,
                          tool_use_id))

    def set_reviews(self, row_id: int, reviews: Any) -> None:
        """Attach the reviewers' verdicts (JSON) once the quorum has answered."""
        with self.store.transaction() as conn:
            conn.execute("UPDATE tool_executions SET reviews = ? WHERE id = ?",
                         (json.dumps(reviews, ensure_ascii=False), row_id))

    def set_state(self, row_id: int, state: CallState) -> None:
        """Move a begun call on (``pending`` → ``running`` when it was approved)."""
        with self.store.transaction() as conn:
            conn.execute("UPDATE tool_executions SET state = ? WHERE id = ?", (state, row_id))

    def finish(
        self,
        row_id: int | None,
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
        decided_by: str | None = None,
        agent: str = "",
        for_person: Any = None,
    ) -> int:
        """Complete the row ``begin`` wrote; without one (or if it is gone), record the call
        whole, so the outcome is never lost. ``for_person``: what the card showed instead of
        the output (``ToolExecution.for_person``)."""
        if row_id is None:
            row_id = self.record(tool_name=tool_name, server_id=server_id,
                                 tool_input=tool_input, decision=decision, outcome=outcome,
                                 output=output, is_error=is_error, rule_id=rule_id,
                                 duration_ms=duration_ms, conversation_id=conversation_id,
                                 tool_use_id=tool_use_id, decided_by=decided_by, agent=agent)
            if for_person is not None:
                self._set_for_person(row_id, for_person)
            return row_id
        output = _capped(output)
        shown = None if for_person is None else json.dumps(for_person, ensure_ascii=False)
        with self.store.transaction() as conn:
            cur = conn.execute(
                "UPDATE tool_executions SET decision = ?, outcome = ?, output = ?,"
                " is_error = ?, rule_id = ?, duration_ms = ?, decided_by = ?, for_person = ?,"
                " state = 'done' WHERE id = ?",
                (decision, outcome, output, int(is_error), rule_id,
                 None if duration_ms is None else max(0, int(duration_ms)), decided_by,
                 shown, row_id))
            if cur.rowcount == 1:
                return row_id
        return self.finish(None, tool_name=tool_name, server_id=server_id,
                           tool_input=tool_input, decision=decision, outcome=outcome,
                           output=output, is_error=is_error, rule_id=rule_id,
                           duration_ms=duration_ms, conversation_id=conversation_id,
                           tool_use_id=tool_use_id, decided_by=decided_by, agent=agent,
                           for_person=for_person)

    def _set_for_person(self, row_id: int, for_person: Any) -> None:
        with self.store.transaction() as conn:
            conn.execute("UPDATE tool_executions SET for_person = ? WHERE id = ?",
                         (json.dumps(for_person, ensure_ascii=False), row_id))

    def for_conversation(self, conversation_id: int) -> dict[str, ToolExecution]:
        """The calls of one conversation by tool_use id (the latest row for each id), with
        what their cards showed (``for_person``, which the history's lists leave out)."""
        sql = (f"SELECT {', '.join(_COLUMNS)}, for_person FROM tool_executions"
               " WHERE conversation_id = ? AND tool_use_id IS NOT NULL ORDER BY id")
        with self.store.lock:
            rows = self.db.conn.execute(sql, (conversation_id,)).fetchall()
        calls = (self._row(row[:-1], for_person=row[-1]) for row in rows)
        return {e.tool_use_id: e for e in calls if e.tool_use_id is not None}

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
        with self.store.lock:
            rows = self.db.conn.execute(sql, (*params, limit, offset)).fetchall()
        return [self._row(r) for r in rows]

    def search(self, query: str, limit: int = 500) -> builtins.list[ToolExecution]:
        """Calls whose tool name, input or output matches ``query`` (full-text, each word taken
        literally), newest first."""
        match = fts_match(self.db, query)
        if not match:
            return []
        # What sqlite-utils' table.search(match, order_by="id DESC") selects, in one statement
        # like ConversationRepository.search (id is the rowid the index is keyed by).
        sql = (f"SELECT {', '.join(_COLUMNS)} FROM tool_executions WHERE id IN"
               " (SELECT rowid FROM tool_executions_fts WHERE tool_executions_fts MATCH ?)"
               " ORDER BY id DESC LIMIT ?")
        with self.store.lock:
            rows = self.db.conn.execute(sql, (match, limit)).fetchall()
        return [self._row(r) for r in rows]

    def count(self) -> int:
        with self.store.lock:
            return int(self.db.conn.execute("SELECT count(*) FROM tool_executions").fetchone()[0])

    @staticmethod
    def _row(row: tuple[Any, ...], for_person: str | None = None) -> ToolExecution:
        values = dict(zip(_COLUMNS, row, strict=True))
        values["for_person"] = json.loads(for_person) if for_person else None
        values["input"] = json.loads(values["input"])
        values["is_error"] = bool(values["is_error"])
        values["changes"] = json.loads(values["changes"]) if values["changes"] else None
        values["reviews"] = json.loads(values["reviews"]) if values["reviews"] else None
        owner = values.pop("owner")
        # Decided when read, not by a start-up sweep: correct however the process ended, and a
        # row another running instance owns only looks interrupted until it finishes it.
        interrupted = values["state"] != CallState.DONE and owner != PROCESS_TOKEN
        if interrupted and values["output"] is None:
            values["output"] = INTERRUPTED_OUTPUT.format(
                what="it was never run" if values["state"] == CallState.PENDING
                else "it was stopped while running")
        return ToolExecution(**values, interrupted=interrupted)
