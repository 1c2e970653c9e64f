"""Interrupted calls say so: a call is on record before it waits or runs, and a record the app
never finished reads as interrupted after a restart, never as done. And the permission check
(which parses the input) never runs on the event loop's thread."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from app.core.agent.events import ApprovalResponse, ToolStarted
from app.core.permissions.rules import PermissionRule
from app.core.store.audit import (
    INTERRUPTED_WHILE_RUNNING,
    NOT_RUN_INTERRUPTED,
    AuditRepository,
    ToolExecution,
)
from app.core.store.db import open_database
from tests.fakes.anthropic_server import FakeAnthropicServer, Response, tool
from tests.unit.agent import interrupted_child
from tests.unit.agent.helpers import Harness


def _reopened(path: Path) -> AuditRepository:
    return AuditRepository(open_database(path))


async def test_killed_while_waiting_for_approval_reads_not_run(
        fake_anthropic: FakeAnthropicServer, fresh_data_dir: Path, project: Path) -> None:
    db_path = fresh_data_dir / "killed.sqlite3"
    fake_anthropic.script(Response.tool_use("record", {"value": "x"},
                                            id=interrupted_child.APPROVAL_CALL_ID))
    proc, conversation_id = await asyncio.to_thread(
        interrupted_child.spawn, db_path, fake_anthropic.base_url, "approval", project)
    interrupted_child.kill(proc)

    audit = _reopened(db_path)  # "after a restart": another process reads the file
    (row,) = audit.list()
    assert (row.tool_use_id, row.state, row.interrupted) == (
        interrupted_child.APPROVAL_CALL_ID, "pending", True)
    assert row.status_label == NOT_RUN_INTERRUPTED
    assert row.outcome != "executed" and row.is_error
    assert "never run" in (row.output or "")
    assert audit.for_conversation(conversation_id)[row.tool_use_id or ""] == row
    audit.db.close()


async def test_killed_while_running_reads_interrupted_while_running(
        fake_anthropic: FakeAnthropicServer, fresh_data_dir: Path, project: Path) -> None:
    db_path = fresh_data_dir / "killed.sqlite3"
    fake_anthropic.script(Response.tool_use("slow", {}, id=interrupted_child.RUNNING_CALL_ID))
    proc, _conversation_id = await asyncio.to_thread(
        interrupted_child.spawn, db_path, fake_anthropic.base_url, "running", project)
    interrupted_child.kill(proc)

    audit = _reopened(db_path)
    (row,) = audit.list()
    assert (row.state, row.interrupted, row.status_label) == (
        "running", True, INTERRUPTED_WHILE_RUNNING)
    assert row.decision == "allow" and row.outcome != "executed"
    assert "stopped while running" in (row.output or "")
    audit.db.close()


async def test_a_waiting_call_is_on_record_before_the_approval_is_asked(
        harness: Harness) -> None:
    session = harness.session()
    seen_by_approver: list[ToolExecution] = []

    async def approver(_request: object) -> ApprovalResponse:
        await session.writer.flush()
        seen_by_approver.extend(AuditRepository(harness.db).list())
        return ApprovalResponse.approve()

    session.approver = approver
    harness.server.script(Response.tool_use("record", {"value": "v"}, id="toolu_w"),
                          Response.text("done"))
    await session.run("go")

    (pending,) = seen_by_approver
    assert (pending.state, pending.interrupted, pending.status_label) == (
        "pending", False, "waiting for approval")
    assert pending.outcome != "executed"
    (done,) = harness.audit()
    assert (done.id, done.state, done.outcome, done.status_label) == (
        pending.id, "done", "executed", None)
    assert done.output == "recorded v" and done.decision == "ask"


async def test_a_running_call_is_on_record_while_it_runs(harness: Harness) -> None:
    harness.allow("slow")
    harness.server.script(Response.tool_use("slow", {}, id="toolu_s"))
    session = harness.session()
    seen_while_running: list[ToolExecution] = []
    lookers: list[asyncio.Future[None]] = []

    def on_event(event: object) -> None:
        if isinstance(event, ToolStarted):
            lookers.append(asyncio.ensure_future(look_then_stop()))

    async def look_then_stop() -> None:
        await session.writer.flush()
        seen_while_running.extend(AuditRepository(harness.db).list())
        session.cancel()

    harness.on_event_hook = on_event
    await session.run("go")
    await asyncio.gather(*lookers)

    (running,) = seen_while_running
    assert (running.state, running.status_label) == ("running", "running")
    assert harness.slow.started
    (final,) = harness.audit()
    assert (final.id, final.state, final.outcome) == (running.id, "done", "cancelled")


async def test_stop_during_the_preview_finishes_the_record(harness: Harness,
                                                           monkeypatch) -> None:
    session = harness.session()

    async def slow_preview(*_args: object) -> str:
        session.cancel()
        await asyncio.Future()
        return ""

    monkeypatch.setattr(session.approval, "preview", slow_preview)
    harness.server.script(Response.tool_use("record", {"value": "p"}, id="toolu_p"))
    await session.run("go")

    (row,) = harness.audit()  # one row, finished: no pending leftover, no duplicate
    assert (row.state, row.outcome, row.tool_use_id) == ("done", "declined", "toolu_p")


async def test_decide_runs_off_the_event_loop_thread(harness: Harness, monkeypatch) -> None:
    loop_thread = threading.get_ident()
    threads: list[int] = []
    real_decide = harness.permissions.decide

    def recording_decide(*args: object):
        threads.append(threading.get_ident())
        return real_decide(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(harness.permissions, "decide", recording_decide)
    harness.allow("record")
    harness.update_profile(max_iterations=2)
    harness.server.script(
        Response.tool_use("record", {"value": "1"}),
        # The second turn hits the iteration cap: its calls are answered "not run", which
        # consults the rules too (for the audit's decision column).
        Response.tools(tool("record", {"value": "2"}), tool("record", {"value": "3"})))
    await harness.session().run("go")

    assert len(threads) == 3
    assert loop_thread not in threads
    assert [a.decision for a in harness.audit()] == ["allow", "allow", "allow"]


async def test_a_rule_change_during_a_threaded_decide_is_not_lost(harness: Harness,
                                                                  monkeypatch) -> None:
    service = harness.permissions
    secret = {"value": "secret"}
    main = threading.get_ident()
    paused, resume = threading.Event(), threading.Event()
    old_index = service._index
    real_rules_for = old_index.rules_for

    def pausing_rules_for(server_id: str, tool_name: str) -> list[PermissionRule]:
        # Pause one worker thread between reading the (old) rule index and caching what it
        # found: the window in which another thread may change the rules and decide again.
        if threading.get_ident() != main and not paused.is_set():
            paused.set()
            # With the service's lock, the change below waits for this thread, so this times
            # out; without it, the change and the other decision land here.
            resume.wait(timeout=1.0)
        return real_rules_for(server_id, tool_name)

    monkeypatch.setattr(old_index, "rules_for", pausing_rules_for)
    first = asyncio.ensure_future(asyncio.to_thread(service.decide, "test", "record", secret))
    assert await asyncio.to_thread(paused.wait, 5.0)

    def change_rules_and_decide() -> str:
        service.rules.add(PermissionRule("deny", tool_name="record", input_pattern="*secret*"))
        kind = service.decide("test", "record", secret).kind
        resume.set()
        return kind

    assert await asyncio.to_thread(change_rules_and_decide) == "deny"
    assert (await first).kind == "ask"  # decided on the rules as they were
    # What the paused thread found for the old rules must not be cached for the new ones.
    assert service.decide("test", "record", secret).kind == "deny"


def test_calls_recorded_before_the_migration_read_as_done(fresh_data_dir: Path) -> None:
    import sqlite3

    from app.core.store.migrations import MIGRATIONS
    from app.core.store.sql_script import split_sql

    path = fresh_data_dir / "v1.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in split_sql(MIGRATIONS[0]):
        conn.execute(statement)
    conn.execute("PRAGMA user_version=1")
    conn.execute("INSERT INTO tool_executions (tool_name, input, decision, outcome, created_at)"
                 " VALUES ('read_file', '{}', 'allow', 'executed', '2026-01-01T00:00:00')")
    conn.close()

    audit = _reopened(path)
    (row,) = audit.list()
    assert (row.state, row.interrupted, row.status_label, row.outcome) == (
        "done", False, None, "executed")
    audit.db.close()
