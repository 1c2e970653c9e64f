"""The window's side of parallel runs: the Runs button and status view (status, project,
elapsed, tokens, cost; Open and Stop), asking before closing while runs work, and when a run
notifies the desktop."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from app.core.agent.run_board import RunRow, RunStatus
from app.core.services import Services
from app.ui.dialogs.runs_view import COLUMNS, cost_text, elapsed_text
from app.ui.main_window import MainWindow
from app.ui.parallel_runs import quit_question
from app.ui.run_notifications import notification_for
from app.ui.widgets.transcript_view import MessageView
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.ui.conftest import wait_for
from tests.ui.run_windows import run_window

WRITE = {"path": "doc/a.md", "content": "x\n"}


@pytest.fixture
def window(qtbot, services: Services, project: Path,
           fake_anthropic_env) -> MainWindow:  # noqa: F811
    return run_window(qtbot, services, project)


async def _two_waiting(window: MainWindow, server) -> tuple[int, int]:
    """Conversation A asks for an approval in the background, B asks while shown."""
    panel = window.ai_panel
    server.script(Response.tool_use("write_file", WRITE, id="a1"),
                  Response.tool_use("write_file", WRITE, id="b1"))
    assert panel.send("task A")
    await wait_for(lambda: panel.approvals.pending_count() == 1, timeout=20)
    a_id = panel.session.conversation_id
    panel.new_conversation()
    assert panel.send("task B")
    await wait_for(lambda: panel.approvals.pending_count() == 2, timeout=20)
    return a_id, panel.session.conversation_id


def _table(view) -> list[list[str]]:
    table = view.table
    return [[table.item(r, c).text() for c in range(len(COLUMNS) - 1)]
            for r in range(table.rowCount())]


async def test_the_status_view_lists_the_runs_with_open_and_stop(
        qtbot, window, project, fake_anthropic_env):  # noqa: F811
    runs = window.parallel_runs
    assert not runs.button.isVisible()
    a_id, b_id = await _two_waiting(window, fake_anthropic_env)
    assert runs.button.isVisible() and runs.button.text() == "Runs: 2"
    assert runs.action.text() == "&Runs (2)…"
    runs.action.trigger()
    view = runs.button.view
    assert view is not None and view.isVisible()
    rows = _table(view)
    assert sorted(r[0] for r in rows) == ["task A", "task B"]
    assert {r[1] for r in rows} == {"Needs input"} and {r[2] for r in rows} == {project.name}
    assert all(int(r[4].replace(",", "")) > 0 for r in rows)  # tokens of the first turn

    fake_anthropic_env.script(Response.text("A stopped"))
    _open, stop = view.buttons_of(str(a_id))
    stop.click()  # A, in the background: only its approval goes
    board = window.ai_panel.sessions.pool.board
    await wait_for(lambda: board.rows[str(a_id)].status is RunStatus.STOPPED, timeout=20)
    assert window.ai_panel.approvals.pending_count() == 1
    assert window.ai_panel.approvals.current_dialog.request.conversation_id == b_id
    assert runs.button.text() == "Runs: 1"
    assert {r[0]: r[1] for r in _table(view)}["task A"] == "Stopped"
    assert not view.buttons_of(str(a_id))[1].isEnabled()

    open_a, _stop = view.buttons_of(str(a_id))
    open_a.click()  # B goes on in the background, A is shown
    await wait_for(lambda: window.ai_panel.session.conversation_id == a_id)
    texts = [w.markdown for w in window.ai_panel.transcript.items()
             if isinstance(w, MessageView)]
    assert texts[0] == "task A"
    assert window.ai_panel.sessions.running_in_background(b_id)
    fake_anthropic_env.script(Response.text("B stopped"))
    view.buttons_of(str(b_id))[1].click()
    await wait_for(lambda: board.rows[str(b_id)].status is RunStatus.STOPPED, timeout=20)
    assert runs.button.text() == "Runs: 0"
    await window.ai_panel.shutdown()


def test_the_elapsed_time_and_cost_read_well() -> None:
    assert [elapsed_text(s) for s in (0, 59.9, 61, 3725)] == \
        ["0 s", "59 s", "1 min 01 s", "1 h 02 min"]
    assert [cost_text(c) for c in (0.0, 0.0004, 0.126)] == ["—", "< $0.01", "$0.13"]


async def test_closing_while_runs_work_asks_first(qtbot, window, monkeypatch,
                                                  fake_anthropic_env):  # noqa: F811
    asked: list[str] = []
    answer = [False]

    def question(text: str) -> bool:
        asked.append(text)
        return answer[0]

    window.parallel_runs.confirm_quit = question
    a_id, b_id = await _two_waiting(window, fake_anthropic_env)
    assert not window.close()
    assert asked == ["2 runs are working; stop them and quit?"]
    assert window.isVisible() and window.ai_panel.approvals.pending_count() == 2
    answer[0] = True
    fake_anthropic_env.script(Response.text("stopped"), Response.text("stopped"))
    app = QApplication.instance()
    quits = app.quitOnLastWindowClosed()
    app.setQuitOnLastWindowClosed(False)  # the test's event loop outlives the window
    try:
        window.close()
        await wait_for(lambda: not window.isVisible(), timeout=20)
    finally:
        app.setQuitOnLastWindowClosed(quits)
    board = window.ai_panel.sessions.pool.board
    await wait_for(lambda: not board.active(), timeout=20)
    assert {board.rows[str(k)].status for k in (a_id, b_id)} == {RunStatus.STOPPED}
    assert quit_question(1) == "1 run is working; stop it and quit?"
    await window.ai_panel.shutdown()


def _row(status: RunStatus) -> RunRow:
    return RunRow("7", "Fix the build", Path("/p"), status, time.monotonic())


def test_notifications_only_when_the_app_is_not_in_front() -> None:
    working, needs = RunStatus.WORKING, RunStatus.NEEDS_INPUT
    assert notification_for(working, _row(needs), app_active=True) is None
    assert notification_for(working, _row(needs), app_active=False) == \
        ("Approval needed", "“Fix the build” asks to run a tool.")
    assert notification_for(needs, _row(needs), app_active=False) is None  # said already
    assert notification_for(working, _row(RunStatus.DONE), app_active=False) == \
        ("Run finished", "“Fix the build” is done.")
    assert notification_for(needs, _row(RunStatus.FAILED), app_active=False)[0] == \
        "Run failed"
    assert notification_for(working, _row(RunStatus.STOPPED), app_active=False) is None
    assert notification_for(None, _row(RunStatus.DONE), app_active=False) is None
    assert notification_for(None, _row(working), app_active=False) is None


def test_a_clicked_notification_opens_its_conversation(qtbot, window, monkeypatch) -> None:
    runs = window.parallel_runs
    opened: list[str] = []
    monkeypatch.setattr(runs.switch, "open", opened.append)
    runs.notifier.notify("7", "Run finished", "done")
    runs.notifier._clicked_key = "7"  # what the tray's message was about
    runs.notifier._on_clicked()
    assert opened == ["7"] and runs.notifier.shown[-1] == ("7", "Run finished", "done")


async def test_a_run_in_the_background_notifies_while_the_app_is_not_in_front(
        qtbot, window, monkeypatch, fake_anthropic_env):  # noqa: F811
    from PySide6.QtCore import Qt

    from app.ui import run_notifications

    state = [Qt.ApplicationState.ApplicationInactive]
    monkeypatch.setattr(run_notifications.QApplication, "applicationState",
                        staticmethod(lambda: state[0]))
    runs = window.parallel_runs
    panel = window.ai_panel
    fake_anthropic_env.script(Response.tool_use("write_file", WRITE, id="a1"),
                              Response.text("A is done"))
    assert panel.send("task A")
    await wait_for(lambda: panel.approvals.pending_count() == 1, timeout=20)
    a_id = panel.session.conversation_id
    assert runs.notifier.shown[-1] == (str(a_id), "Approval needed",
                                       "“task A” asks to run a tool.")
    panel.new_conversation()  # A goes on in the background
    panel.approvals.current_dialog.approve_button.click()
    board = panel.sessions.pool.board
    await wait_for(lambda: board.rows[str(a_id)].status is RunStatus.DONE, timeout=20)
    assert runs.notifier.shown[-1] == (str(a_id), "Run finished", "“task A” is done.")
    state[0] = Qt.ApplicationState.ApplicationActive  # in front: nothing more is said
    count = len(runs.notifier.shown)
    fake_anthropic_env.script(Response.text("B is done"))
    assert panel.send("task B")
    await wait_for(lambda: not panel.running, timeout=20)
    assert len(runs.notifier.shown) == count
    runs.notifier.clicked.emit(str(a_id))  # the person clicks A's message
    await wait_for(lambda: panel.session.conversation_id == a_id)
    await panel.shutdown()
