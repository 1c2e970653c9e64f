"""The approval queue's one teardown path: ``abort`` declines the shown dialog and everything
queued, each exactly once, however often and from wherever it is called."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtWidgets import QDialog, QWidget

from app.core.agent.events import ApprovalRequest, ApprovalResponse
from app.core.services import Services
from app.ui.ai_panel.panel import AIPanel
from app.ui.approval_queue import ApprovalQueue
from tests.ui.conftest import wait_for


def _request(services: Services, tool_use_id: str) -> ApprovalRequest:
    tool_input = {"path": f"doc/{tool_use_id}.md", "content": "new"}
    tool = services.registry.get("write_file")
    assert tool is not None
    decision = services.permissions.decide("builtin", "write_file", tool_input)
    return ApprovalRequest(tool_use_id, "write_file", "builtin", tool_input, tool.spec,
                           decision, None)


Futures = list[asyncio.Future[ApprovalResponse]]


async def _queue_three(qtbot, services: Services, project: Path,
                       queue: ApprovalQueue | None = None
                       ) -> tuple[ApprovalQueue, Futures, list[object]]:
    """A queue with one dialog shown and two requests waiting behind it."""
    if queue is None:
        parent = QWidget()
        qtbot.addWidget(parent)
        queue = ApprovalQueue(parent, lambda: project)
    shown: list[object] = []
    queue.dialog_shown.connect(shown.append)
    futures = [asyncio.ensure_future(queue.request(_request(services, f"tu_{i}")))
               for i in range(3)]
    await wait_for(lambda: queue.current_dialog is not None and queue.pending_count() == 3)
    return queue, futures, shown


async def _settled(futures: Futures) -> list[ApprovalResponse]:
    return await asyncio.wait_for(asyncio.gather(*futures), timeout=5)


async def test_abort_twice_declines_each_request_once_with_the_first_reason(
        qtbot, services, project):
    queue, futures, shown = await _queue_three(qtbot, services, project)
    dialog = queue.current_dialog
    counts: list[int] = []
    queue.pending_changed.connect(counts.append)
    closed: list[int] = []
    dialog.finished.connect(closed.append)

    queue.abort("first")
    queue.abort("second")  # nothing left: must neither re-answer nor signal again

    responses = await _settled(futures)
    assert [(r.approved, r.reason) for r in responses] == [(False, "first")] * 3
    assert counts == [0]
    assert queue.current_dialog is None and queue.pending_count() == 0
    assert shown == [dialog]  # the queued requests were declined, never shown
    assert closed == [QDialog.DialogCode.Rejected.value]  # closed once, as declined


async def test_closing_the_dialog_during_abort_answers_nothing_twice(qtbot, services, project):
    queue, futures, shown = await _queue_three(qtbot, services, project)
    dialog = queue.current_dialog
    nested: list[int] = []

    def close_again(_code: int) -> None:
        # What a window closing mid-teardown does: the dialog is closed once more and the
        # queue is aborted again, from inside the first abort.
        nested.append(queue.pending_count())
        dialog.close()
        queue.abort("nested")

    dialog.finished.connect(close_again)
    queue.abort("stopped")

    responses = await _settled(futures)
    assert nested == [0]  # the queue was already empty when the dialog's signal fired
    assert [(r.approved, r.reason) for r in responses] == [(False, "stopped")] * 3
    assert shown == [dialog]  # the dialog's finished signal did not bring up the next one
    assert queue.current_dialog is None and queue.pending_count() == 0


async def test_stop_with_two_queued_requests_declines_all_three(qtbot, services: Services,
                                                                project: Path):
    host = QWidget()
    qtbot.addWidget(host)
    profile = services.profiles.ensure_default()
    assert profile.id is not None
    queue = ApprovalQueue(host, lambda: project)
    panel = AIPanel(services, profile.id, queue, lambda: project)
    qtbot.addWidget(panel)
    queue, futures, shown = await _queue_three(qtbot, services, project, queue)
    assert len(shown) == 1 and queue.pending_count() == 3

    panel.stop()
    panel.stop()  # a second press changes nothing

    responses = await _settled(futures)
    assert [r.approved for r in responses] == [False, False, False]
    assert {r.reason for r in responses} == {"The person stopped the run."}
    assert len(shown) == 1 and queue.pending_count() == 0


async def test_the_queue_works_again_after_an_abort(qtbot, services, project):
    # Stop ends one run; the next run's calls must still be asked about, not declined.
    queue, futures, _ = await _queue_three(qtbot, services, project)
    queue.abort("stopped")
    await _settled(futures)
    later = asyncio.ensure_future(queue.request(_request(services, "later")))
    await wait_for(lambda: queue.current_dialog is not None)
    queue.current_dialog.approve_button.click()
    assert (await asyncio.wait_for(later, timeout=5)).approved is True


async def test_a_request_cancelled_during_abort_stays_cancelled(qtbot, services, project):
    queue, futures, _ = await _queue_three(qtbot, services, project)
    futures[1].cancel()  # its run was cancelled before the abort got to it
    queue.abort("stopped")
    results = await asyncio.wait_for(asyncio.gather(*futures, return_exceptions=True), 5)
    assert isinstance(results[1], asyncio.CancelledError)
    assert [(r.approved, r.reason) for r in (results[0], results[2])] == [(False, "stopped")] * 2
