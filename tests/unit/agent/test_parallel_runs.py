"""Two conversations running at once, each with its own approvals and labels, watched by one
run board with a limit."""

from __future__ import annotations

import asyncio

import pytest

from app.core.agent.events import ApprovalRequest, ApprovalResponse
from app.core.agent.run_board import RunBoard, RunStatus
from app.core.permissions.flow import FlowLabel
from tests.fakes.anthropic_server import Response, tool
from tests.unit.agent.helpers import Harness


async def test_two_conversations_run_at_once_with_their_own_approvals(
        harness: Harness) -> None:
    board = RunBoard(limit=lambda: 2)
    asked: dict[str, list[ApprovalRequest]] = {"a": [], "b": []}
    gate_a: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def approver_a(request: ApprovalRequest) -> ApprovalResponse:
        asked["a"].append(request)
        await gate_a  # A waits for its person while B works on
        return ApprovalResponse(True)

    async def approver_b(request: ApprovalRequest) -> ApprovalResponse:
        asked["b"].append(request)
        return ApprovalResponse(False, "not in B")

    harness.update_profile(model="model-a")
    harness.server.script_for("model-a", Response.tools(tool("record", {"value": "A"}, id="a1")))
    a, b = harness.session(), harness.session()
    a.approver, b.approver = approver_a, approver_b
    board.start("a", "A", harness.project)
    board.start("b", "B", harness.project)
    assert not board.may_start()
    with pytest.raises(RuntimeError):
        board.start("c", "C", harness.project)
    a.on_event = board.watch("a", a.on_event)
    b.on_event = board.watch("b", b.on_event)
    run_a = asyncio.ensure_future(a.run("do A"))
    for _ in range(300):
        if asked["a"]:
            break
        await asyncio.sleep(0.01)
    assert board.rows["a"].status is RunStatus.NEEDS_INPUT
    # B runs to the end while A waits for its approval.
    harness.server.script_for("model-a", Response.tools(tool("record", {"value": "B"}, id="b1")),
                              Response.text("B done"))
    b.flow.add(FlowLabel.UNTRUSTED, "a page", "web_fetch")
    await b.run("do B")
    assert board.rows["b"].status is RunStatus.DONE
    assert [r.tool_name for r in asked["b"]] == ["record"] and harness.record.calls == []
    assert not a.flow.has(FlowLabel.UNTRUSTED)  # labels are per conversation
    harness.server.script_for("model-a", Response.text("A done"))
    gate_a.set_result(None)
    await run_a
    assert harness.record.calls == [{"value": "A"}]
    assert board.rows["a"].status is RunStatus.DONE and board.rows["a"].output_tokens > 0
    assert board.may_start()
