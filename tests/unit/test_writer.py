"""BackgroundWriter: writes happen off the calling thread, in order, and flush waits for them."""

from __future__ import annotations

import threading

from app.core.store.audit import AuditRepository
from app.core.store.writer import BackgroundWriter


async def test_writes_run_in_order_off_the_loop_thread_and_flush_waits(db):
    writer = BackgroundWriter()
    audit = AuditRepository(db)
    threads: list[str] = []
    for i in range(50):
        writer.submit(lambda i=i: (threads.append(threading.current_thread().name),
                                   audit.record(tool_name=f"t{i}", server_id="builtin",
                                                tool_input={"i": i}, decision="allow",
                                                outcome="executed")))
    await writer.flush()
    names = [e.tool_name for e in reversed(audit.list(limit=100))]
    assert names == [f"t{i}" for i in range(50)]
    assert set(threads) == {threads[0]} and threads[0] != threading.current_thread().name
    writer.close()


def test_close_finishes_pending_writes_and_later_writes_still_land(db):
    writer = BackgroundWriter()
    audit = AuditRepository(db)
    gate = threading.Event()
    writer.submit(gate.wait)
    writer.submit(audit.record, tool_name="queued", server_id="b", tool_input={},
                  decision="ask", outcome="declined")
    gate.set()
    writer.close()
    assert audit.list()[0].tool_name == "queued"
    writer.submit(audit.record, tool_name="after", server_id="b", tool_input={},
                  decision="ask", outcome="declined")
    assert audit.list()[0].tool_name == "after"


def test_failed_write_is_reported_not_raised_in_caller(db, caplog):
    writer = BackgroundWriter()
    future = writer.submit(AuditRepository(db).record, tool_name="x", server_id="b",
                           tool_input={}, decision="nonsense", outcome="executed")
    assert future.exception(timeout=10) is not None
    writer.close()
    assert "database write failed" in caplog.text
