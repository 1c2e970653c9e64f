"""Sub-agents through the real window, the real AgentSession and tools, and the fake Messages
API on 127.0.0.1: the Orchestration choice turns them on, the tree under execute_sub_agent
shows each child (Stop, Stop all, Open transcript), a child's approval dialog names the chain,
an approval-mode run pauses, survives a restart and resumes from the pause bar, Stop all ends a
child's processes, quitting cancels working children, a quarantined child returns its JSON, an
orchestration run can call web_fetch, and undoing the parent's message undoes what its child
changed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QPushButton

from app.core.orchestration_mode import Orchestration
from app.core.permissions.rules import PermissionRule
from app.core.store.orchestration import OrchestrationRepository
from app.core.store.profiles import ToolSetting
from app.core.store.usage import UsageRepository
from tests.e2e.conftest import shown_window
from tests.fakes.anthropic_server import Response, tool
from tests.fakes.web_server import FakeWebServer
from tests.sandbox_support import requires_sandbox
from tests.ui.conftest import wait_for
from tests.unit.agent.sub_agents.test_delegation import _create, _execute

CHILD_MODEL = "claude-sub-agent-test"


def _result_text(fake, tool_use_id: str) -> str:
    for request in fake.message_requests:
        for result in request.tool_results():
            if result.get("tool_use_id") == tool_use_id:
                content = result.get("content")
                return content if isinstance(content, str) else json.dumps(content)
    raise AssertionError(f"no result for {tool_use_id}")


def choose_orchestration(window, choice: Orchestration) -> None:
    """As the person does: the Orchestration combo above the tools list."""
    combo = window.tools_panel.orchestration.combo
    combo.setCurrentIndex(combo.findData(choice.value))
    assert window.services.profiles.get(window.profile_id).orchestration is choice


async def _ran(window, timeout: float = 30) -> None:
    await wait_for(lambda: window.ai_panel.running, timeout=5)
    await wait_for(lambda: not window.ai_panel.running, timeout=timeout)


def _rows(window, call_id: str):
    card = window.ai_panel.tool_cards.by_id.get(call_id)
    return card.sub_agents if card is not None else None


def _row_texts(rows, row: int = 0) -> list[str]:
    item = rows.tree.topLevelItem(row)
    return [item.text(column) for column in range(5)]


def _pause_bars(panel) -> list:
    return [w for w in panel.transcript.items() if w.objectName() == "orchestration-pause"]


def _processes_with(marker: str) -> list[int]:
    """Every process whose command line names ``marker`` (the sandbox's wrapper too)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            with contextlib.suppress(OSError):
                if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(int(pid))
    return found


async def test_a_foreground_child_shows_its_row_and_its_transcript(window, fake_anthropic):
    choose_orchestration(window, Orchestration.SUB_AGENTS)
    fake_anthropic.script(
        _create("helper", "c1", model=CHILD_MODEL), _execute("helper", "e1", "summarise X"),
        Response.text("done"))
    fake_anthropic.script_for(CHILD_MODEL, Response.text("The summary is fine."))
    assert window.ai_panel.send("delegate")
    await _ran(window)
    assert "The summary is fine." in _result_text(fake_anthropic, "e1")
    # The child's tokens are the conversation's too: live, and in the store.
    session = window.ai_panel.session
    assert session.conversation_usage()[CHILD_MODEL].output_tokens > 0
    stored = UsageRepository(window.services.db).for_conversation(session.conversation_id)
    assert stored[CHILD_MODEL].output_tokens > 0
    rows = _rows(window, "e1")
    assert rows is not None and rows.isVisible()
    name, status, elapsed, _tokens, cost = _row_texts(rows)
    assert (name, status) == ("helper", "Done")
    assert elapsed.endswith("s") and cost.startswith("$")
    stop = rows.findChild(QPushButton, "sub-agent-stop")
    assert not stop.isEnabled() and not rows.stop_all.isEnabled()
    rows.findChild(QPushButton, "sub-agent-open").click()

    def shown():
        return [w for w in QApplication.topLevelWidgets()
                if w.objectName() == "sub-agent-transcript" and w.isVisible()]

    await wait_for(lambda: bool(shown()), timeout=10)
    (dialog,) = shown()
    view = dialog.findChild(QPlainTextEdit)
    assert "The summary is fine." in view.toPlainText() and "summarise X" in view.toPlainText()
    assert view.isReadOnly()
    dialog.close()


@contextlib.asynccontextmanager
async def approving(window, *, approve: bool, chains: list[str]) -> AsyncIterator[None]:
    """Answer every approval dialog the window shows (noting the agent chain it names)."""

    async def answer() -> None:
        while True:
            dialog = window.approvals.current_dialog
            if dialog is not None and dialog.isVisible():
                chains.append(dialog.agent_chain.text() if dialog.agent_chain else "")
                (dialog.approve_button if approve else dialog.decline_button).click()
            await asyncio.sleep(0.01)

    task = asyncio.ensure_future(answer())
    try:
        yield
    finally:
        task.cancel()


async def _run_answering(window, text: str, *, approve: bool) -> list[str]:
    """Send ``text`` and answer every approval until the run ends; the chains they named."""
    chains: list[str] = []
    async with approving(window, approve=approve, chains=chains):
        assert window.ai_panel.send(text)
        await _ran(window)
    return chains


def _child_writes(fake, path: str, content: str, claim: str) -> None:
    fake.script_for(CHILD_MODEL, Response.tools(tool("write_file", {"path": path,
                                                                    "content": content})),
                    Response.text(claim))


async def test_a_background_childs_declined_call_shows_in_its_result(window, fake_anthropic,
                                                                     project):
    choose_orchestration(window, Orchestration.SUB_AGENTS)
    fake_anthropic.script(
        _create("writer", "c1", tools=["write_file"], model=CHILD_MODEL),
        _execute("writer", "e1", "write doc/x.md", background=True),
        Response.tools(tool("get_sub_agent_result", {"execution_id": "1", "wait_s": 20},
                            id="r1")),
        Response.text("done"))
    _child_writes(fake_anthropic, "doc/x.md", "x", "I wrote doc/x.md successfully.")
    chains = await _run_answering(window, "delegate the writing", approve=False)
    # The background child's approval was shown to the person (never auto-denied), by name.
    assert chains and "orchestrator › writer" in chains[0]
    assert not (project / "doc" / "x.md").exists()
    assert "background" in _result_text(fake_anthropic, "e1")
    result = _result_text(fake_anthropic, "r1")
    assert "write_file: declined (not run)" in result  # the facts, not the child's claim
    assert _rows(window, "e1").status_of(1) in ("Done", "Failed")
    # The tool history says which agent made the call.
    history = window.history
    history.model.reload()
    await wait_for(lambda: history.model.rowCount() >= 1, timeout=10)
    model = history.model
    tools = [model.data(model.index(r, model.COL_TOOL)) for r in range(model.rowCount())]
    assert "write_file (orchestrator › writer)" in tools


async def test_a_background_child_asks_after_its_parents_run_has_ended(
        window, fake_anthropic, project):
    """The parent's run is over when its background child asks: the window still shows the
    question, names the child, and the answer is the child's."""
    choose_orchestration(window, Orchestration.SUB_AGENTS)
    fake_anthropic.script(
        _create("writer", "c1", tools=["write_file"], model=CHILD_MODEL),
        _execute("writer", "e1", "write doc/y.md", background=True), Response.text("started"))
    # The child's first answer comes after the parent's run has ended (checked below).
    fake_anthropic.script_for(
        CHILD_MODEL, Response.tools(tool("write_file", {"path": "doc/y.md", "content": "y"}),
                                    delay_s=2),
        Response.text("Wrote doc/y.md."))
    assert window.ai_panel.send("delegate in the background")
    await _ran(window)
    rows = _rows(window, "e1")
    assert rows.status_of(1) == "Working" and window.approvals.current_dialog is None
    await wait_for(lambda: window.approvals.current_dialog is not None
                   and window.approvals.current_dialog.isVisible(), timeout=20)
    dialog = window.approvals.current_dialog
    assert "orchestrator › writer" in dialog.agent_chain.text()
    assert rows.status_of(1) == "Needs input"
    dialog.approve_button.click()
    await wait_for(lambda: rows.status_of(1) == "Done", timeout=20)
    assert (project / "doc" / "y.md").read_text() == "y"


@requires_sandbox
@pytest.mark.parametrize("stop", ["stop_all", "panel_stop"])
async def test_stop_ends_a_childs_processes_within_2_s(window, fake_anthropic, stop):
    """The tree's Stop all (the parent goes on with the cancelled result) or the panel's Stop
    (the whole run ends): the child's sandboxed command, wrapper and all, is gone in 2 s."""
    services, profile_id = window.services, window.profile_id
    services.profiles.set_tool(profile_id, ToolSetting("shell_exec", True, {
        "program_level": "any_sandboxed"}))
    services.permissions.rules.add(PermissionRule("allow", server_id="builtin",
                                                  tool_name="shell_exec"))
    choose_orchestration(window, Orchestration.SUB_AGENTS)
    # A `sleep` nothing else on the machine runs (another run's leftover neither).
    marker = f"61.{os.getpid() % 10000:04d}"
    fake_anthropic.script(_create("sleeper", "c1", tools=["shell_exec"], model=CHILD_MODEL),
                          _execute("sleeper", "e1"), Response.text("the parent goes on"))
    fake_anthropic.script_for(CHILD_MODEL, Response.tools(
        tool("shell_exec", {"command": f"sleep {marker}"}, id="s1")),
        Response.text("stopped"))
    panel = window.ai_panel
    assert panel.send("delegate")
    await wait_for(lambda: _rows(window, "e1") is not None, timeout=20)
    rows = _rows(window, "e1")
    await wait_for(lambda: bool(_processes_with(marker)), timeout=20)
    assert rows.status_of(1) == "Working" and rows.stop_all.isEnabled()
    (rows.stop_all if stop == "stop_all" else panel.stop_button).click()
    stopped = time.monotonic()
    await wait_for(lambda: not _processes_with(marker), timeout=10)
    assert time.monotonic() - stopped <= 2.0, "the child's processes outlived Stop by > 2 s"
    await wait_for(lambda: rows.status_of(1) == "Cancelled", timeout=10)
    await wait_for(lambda: not panel.running, timeout=10)
    assert not rows.stop_all.isEnabled()
    if stop == "stop_all":  # the parent got the child's cancelled result and went on
        assert "cancelled" in _result_text(fake_anthropic, "e1").lower()
        assert fake_anthropic.pending == 0
    assert repo_status(window, 1) == "cancelled"


def repo_status(window, execution_id: int) -> str:
    return OrchestrationRepository(window.services.db).execution(execution_id).status


async def test_a_quarantined_child_returns_its_json(window, fake_anthropic):
    choose_orchestration(window, Orchestration.SUB_AGENTS)
    schema = {"type": "object", "additionalProperties": False,
              "properties": {"found": {"type": "boolean"}, "safe": {"type": "boolean"}}}
    fake_anthropic.script(
        _create("checker", "c1", result_schema=schema), _execute("checker", "e1"),
        Response.text('{"found": true, "safe": false}'), Response.text("done"))
    assert window.ai_panel.send("check it in quarantine")
    await _ran(window)
    assert "quarantined" in _result_text(fake_anthropic, "c1")
    result = _result_text(fake_anthropic, "e1")
    assert '"found": true' in result and '"safe": false' in result
    assert _rows(window, "e1").status_of(1) == "Done"


async def test_an_orchestration_run_can_call_web_fetch(window, fake_anthropic):
    services, profile_id = window.services, window.profile_id
    fetch = services.profiles.tool_settings(profile_id)["web_fetch"]
    services.profiles.set_tool(profile_id, ToolSetting(
        "web_fetch", True, {**fetch.config, "allow_private_network": True}))
    choose_orchestration(window, Orchestration.SUB_AGENTS)
    with FakeWebServer() as web:
        web.add("/page", body="<h1>Sub-agent page</h1><p>marker-4711</p>",
                content_type="text/html")
        fake_anthropic.script(
            _create("reader", "c1", tools=["web_fetch"], model=CHILD_MODEL),
            _execute("reader", "e1", "fetch the page"), Response.text("done"))
        fake_anthropic.script_for(
            CHILD_MODEL, Response.tools(tool("web_fetch", {"url": web.url("/page")}, id="f1")),
            Response.text("The page says marker-4711."))
        await _run_answering(window, "read the page through a sub-agent", approve=True)
        assert web.hits("/page")
    child_results = [r for req in fake_anthropic.message_requests
                     if req.body.get("model") == CHILD_MODEL for r in req.tool_results()]
    assert child_results and "marker-4711" in json.dumps(child_results[0])
    assert "marker-4711" in _result_text(fake_anthropic, "e1")
    assert "1 executed" in _result_text(fake_anthropic, "e1")


async def test_approval_mode_pauses_survives_a_restart_and_runs_from_the_bar(
        qtbot, window, fake_anthropic, fresh_data_dir, project):
    from app.core.services import build_services
    from app.core.store.db import open_database

    choose_orchestration(window, Orchestration.APPROVAL)
    # The run ends at the pause: the model gets no further turn.
    fake_anthropic.script(_create("helper", "c1"), _execute("helper", "e1", "summarise X"))
    assert window.ai_panel.send("delegate with approval")
    await _ran(window)
    assert _rows(window, "e1").status_of(1) == "Waiting for your approval"
    await wait_for(lambda: bool(_pause_bars(window.ai_panel)))
    (bar,) = _pause_bars(window.ai_panel)
    assert "helper" in bar.label.text() and "waits for your approval" in bar.label.text()
    assert len(fake_anthropic.message_requests) == 2  # the child has not run
    conversation_id = window.ai_panel.session.conversation_id
    # Quit as app.main does: the window closes, the panel shuts down, the store closes.
    window.close()
    await window.ai_panel.shutdown()
    await window.services.aclose()
    window.services.db.close()

    # A restart: a new store connection and a new window on the same data dir.
    db = open_database(fresh_data_dir / "tebiki.sqlite3")
    try:
        services = build_services(db, fresh_data_dir, project)
        (run,) = OrchestrationRepository(db).runs_for(conversation_id)
        assert run.status == "paused"  # quitting kept the paused run paused
        async with shown_window(qtbot, services, project) as again:
            panel = again.ai_panel
            panel.conversations.open(conversation_id)
            await wait_for(lambda: bool(_pause_bars(panel)), timeout=10)
            (bar,) = _pause_bars(panel)
            assert "helper" in bar.label.text()
            fake_anthropic.script(Response.text("The summary of X."),
                                  Response.text("The parent continues with the summary."))
            bar.run_button.click()
            assert panel.running and not bar.run_button.isEnabled()
            await wait_for(lambda: not panel.running, timeout=30)
            assert "The summary of X." in _result_text(fake_anthropic, "e1")
            # The parent continued: its last request carries the child's result.
            assert fake_anthropic.pending == 0
            last = fake_anthropic.message_requests[-1]
            assert "The summary of X." in json.dumps(last.tool_results())
            (run,) = OrchestrationRepository(db).runs_for(conversation_id)
            assert run.status == "done"
            again.close()  # while its store is open
    finally:
        db.close()


async def test_quitting_cancels_working_children(window, fake_anthropic):
    choose_orchestration(window, Orchestration.SUB_AGENTS)
    fake_anthropic.script(_create("slow", "c1", model=CHILD_MODEL),
                          _execute("slow", "e1", background=True), Response.text("started"))
    fake_anthropic.script_for(CHILD_MODEL, Response.text("too late", delay_s=30))
    assert window.ai_panel.send("start it in the background")
    await _ran(window)
    rows = _rows(window, "e1")
    await wait_for(lambda: rows.status_of(1) == "Working", timeout=10)
    # Quit as app.main does: the window closes, then the panel shuts down.
    window.close()
    await asyncio.wait_for(window.ai_panel.shutdown(), 10)
    assert repo_status(window, 1) == "cancelled"


@pytest.mark.parametrize("reopened", [False, True], ids=["live", "reopened"])
async def test_undoing_the_parents_message_undoes_its_childs_file_changes(
        window, fake_anthropic, project, reopened):
    from app.ui.widgets.transcript_view import MessageView

    services, profile_id = window.services, window.profile_id
    services.profiles.set_tool(profile_id, ToolSetting("write_file", True,
                                                       {"allowed_write_dirs": ["."]}))
    (project / "notes.md").write_text("old\n")
    choose_orchestration(window, Orchestration.SUB_AGENTS)
    fake_anthropic.script(
        _create("editor", "c1", tools=["write_file"], model=CHILD_MODEL),
        _execute("editor", "e1", "rewrite notes.md"), Response.text("done"))
    _child_writes(fake_anthropic, "notes.md", "new from the child\n", "Rewrote notes.md.")
    chains = await _run_answering(window, "have a sub-agent rewrite the notes", approve=True)
    assert chains == ["Asked by sub-agent: <b>orchestrator › editor</b>"]
    assert (project / "notes.md").read_text() == "new from the child\n"
    panel = window.ai_panel
    if reopened:  # from the store, as after a restart: the parent's audit row has the changes
        panel.conversations.open(panel.session.conversation_id)
    prompt = next(w for w in panel.transcript.items()
                  if isinstance(w, MessageView) and w.role == "user")
    await wait_for(lambda: prompt.restore_button is not None
                   and not prompt.restore_button.isHidden(), timeout=20)
    shown: list[object] = []
    panel.checkpoints.dialog_shown.connect(shown.append)
    panel.undo.restore_to_message(prompt)
    await wait_for(lambda: bool(shown), timeout=20)
    dialog = shown[-1]
    files = [dialog.files.item(i).text().split()[-1] for i in range(dialog.files.count())]
    assert files == ["notes.md"]
    dialog.apply_button.click()
    await wait_for(lambda: (project / "notes.md").read_text() == "old\n", timeout=20)


@pytest.fixture(autouse=True)
def _no_leftover_dialogs():
    yield
    for widget in QApplication.topLevelWidgets():
        if widget.objectName() == "sub-agent-transcript":
            widget.close()
