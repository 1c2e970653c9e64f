"""Conversations run in parallel (issue: parallel work): leaving a conversation that runs — New
conversation, or opening another — keeps its run going in the background; the run board sees
its events, its approval dialog names it, and opening it again shows its stored transcript and
its live run. Up to the PARALLEL_RUNS setting at once; beyond that Send says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.agent.run_board import RunStatus
from app.core.services import Services
from app.core.settings_fields import PARALLEL_RUNS
from app.ui.ai_panel.session_holder import SessionHolder
from app.ui.dialogs.approval import ApprovalDialog
from app.ui.main_window import MainWindow
from app.ui.widgets.transcript_view import MessageView
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.ui.conftest import wait_for
from tests.ui.run_windows import run_window

WRITE = {"path": "doc/a.md", "content": "from A\n"}


@pytest.fixture
def window(qtbot, services: Services, project: Path,
           fake_anthropic_env) -> MainWindow:  # noqa: F811
    return run_window(qtbot, services, project)


def _texts(panel) -> list[str]:
    return [w.markdown for w in panel.transcript.items() if isinstance(w, MessageView)]


async def test_a_conversation_runs_on_while_another_is_shown(qtbot, window, project,
                                                            fake_anthropic_env):  # noqa: F811
    panel = window.ai_panel
    fake_anthropic_env.script(
        Response.tool_use("write_file", WRITE, id="a1"),  # A asks, and waits
        Response.text("B is done"),                       # B runs meanwhile
        Response.text("A is done"))                       # A, once approved
    assert panel.send("task A")
    await wait_for(lambda: panel.approvals.current_dialog is not None, timeout=20)
    dialog_a: ApprovalDialog = panel.approvals.current_dialog
    a_id = panel.session.conversation_id
    assert a_id is not None
    assert dialog_a.request.conversation_id == a_id
    assert dialog_a.conversation_label.text() == "In the conversation <b>task A</b>"
    board = panel.sessions.pool.board
    assert board.rows[str(a_id)].status is RunStatus.NEEDS_INPUT

    panel.new_conversation()  # Ctrl+N while A waits: A goes on in the background
    assert not panel.running and panel.send_button.isEnabled()
    assert _texts(panel) == [] and panel.conversations.title.text() == "New conversation"
    assert panel.approvals.current_dialog is dialog_a  # still asking, naming A
    assert panel.send("task B")
    await wait_for(lambda: not panel.running, timeout=20)
    b_id = panel.session.conversation_id
    assert _texts(panel) == ["task B", "B is done"]
    assert board.rows[str(b_id)].status is RunStatus.DONE
    assert board.rows[str(a_id)].status is RunStatus.NEEDS_INPUT

    dialog_a.approve_button.click()  # A's call runs and A finishes, unseen
    await wait_for(lambda: board.rows[str(a_id)].status is RunStatus.DONE, timeout=20)
    assert (project / "doc" / "a.md").read_text() == "from A\n"
    assert _texts(panel) == ["task B", "B is done"]  # nothing of A's came in here
    assert a_id in panel.sessions.pool.unseen
    await wait_for(lambda: not panel.sessions.pool.parked)

    pager = panel.conversations.open(a_id)
    qtbot.waitUntil(lambda: not pager.busy)
    assert _texts(panel)[0] == "task A" and _texts(panel)[-1] == "A is done"
    assert a_id not in panel.sessions.pool.unseen
    await window.ai_panel.shutdown()


async def test_switching_back_to_a_running_conversation_resumes_its_events(
        qtbot, window, fake_anthropic_env):  # noqa: F811
    panel = window.ai_panel
    fake_anthropic_env.script(Response.tool_use("write_file", WRITE, id="a1"),
                              Response.text("A is done"))
    assert panel.send("task A")
    await wait_for(lambda: panel.approvals.current_dialog is not None, timeout=20)
    a_id = panel.session.conversation_id
    panel.new_conversation()
    assert not panel.running

    pager = panel.conversations.open(a_id)  # back to A while it still waits
    qtbot.waitUntil(lambda: not pager.busy)
    assert panel.running and panel.stop_button.isEnabled() and not panel.send_button.isEnabled()
    assert _texts(panel)[0] == "task A"
    panel.approvals.current_dialog.approve_button.click()
    await wait_for(lambda: not panel.running, timeout=20)
    assert _texts(panel)[-1] == "A is done"  # the live events came to the panel again
    await panel.shutdown()


async def test_stop_declines_only_the_shown_conversations_approvals(
        qtbot, window, fake_anthropic_env):  # noqa: F811
    panel = window.ai_panel
    fake_anthropic_env.script(Response.tool_use("write_file", WRITE, id="a1"),
                              Response.tool_use("write_file", WRITE, id="b1"),
                              Response.text("A is done"))
    assert panel.send("task A")
    await wait_for(lambda: panel.approvals.current_dialog is not None, timeout=20)
    a_id = panel.session.conversation_id
    panel.new_conversation()
    assert panel.send("task B")
    await wait_for(lambda: panel.approvals.pending_count() == 2, timeout=20)
    panel.stop()  # B's Stop: A still asks
    await wait_for(lambda: not panel.running, timeout=20)
    assert panel.approvals.pending_count() == 1
    assert panel.approvals.current_dialog.request.conversation_id == a_id
    board = panel.sessions.pool.board
    assert board.rows[str(panel.session.conversation_id)].status is RunStatus.STOPPED
    panel.approvals.current_dialog.approve_button.click()
    await wait_for(lambda: board.rows[str(a_id)].status is RunStatus.DONE, timeout=20)
    await panel.shutdown()


async def test_send_says_why_beyond_the_limit(qtbot, window, services,
                                              fake_anthropic_env):  # noqa: F811
    services.settings.write(PARALLEL_RUNS, 1)
    panel = window.ai_panel
    fake_anthropic_env.script(Response.tool_use("write_file", WRITE, id="a1"),
                              Response.text("A declined"), Response.text("B is done"))
    assert panel.send("task A")
    await wait_for(lambda: panel.approvals.current_dialog is not None, timeout=20)
    panel.new_conversation()
    messages: list[str] = []
    panel.status_message.connect(messages.append)
    panel.prompt.setPlainText("task B")
    assert not panel.send()
    assert messages[-1] == SessionHolder.AT_LIMIT
    assert panel.prompt.toPlainText() == "task B"  # kept for later
    panel.approvals.current_dialog.decline_button.click()
    await wait_for(lambda: panel.sessions.may_start(), timeout=20)
    assert panel.send()
    await wait_for(lambda: not panel.running, timeout=20)
    await panel.shutdown()
