"""MCP servers' sampling and elicitation requests, end to end through the app's services and
dialogs: real servers (the reference server-everything and tests/mcp_servers/human_loop_server)
ask through the SDK, the dialog is answered here as a person would, the fake Messages API
answers sampling, and the history records it. Plus the queue: one dialog at a time, withdrawn
requests close their dialog, abort answers everything."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QWidget

from app.core.agent.sampling import SAMPLING_TOOL
from app.core.services import Services, build_store_services
from app.core.settings_fields import SAMPLING_MAX_TOKENS_CAP
from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.ui.dialogs.elicitation import ElicitationDialog
from app.ui.dialogs.sampling import SamplingDialog
from app.ui.server_requests import ServerRequestQueue, install_server_requests
from tests.fakes.anthropic_server import (  # noqa: F401  (fixtures)
    FakeAnthropicServer,
    Response,
    fake_anthropic,
    fake_anthropic_env,
)
from tests.mcp_reference import everything_entry
from tests.mcp_servers.human_loop_server import PERSON_FORM
from tests.ui.conftest import wait_for

HUMAN_LOOP = Path(__file__).parents[1] / "mcp_servers" / "human_loop_server.py"


class App:
    def __init__(self, services: Services, queue: ServerRequestQueue, project: Path,
                 fake: FakeAnthropicServer) -> None:
        self.services, self.queue, self.fake = services, queue, fake
        self.ctx = ToolContext(project_root=project)
        self.shown: list[Any] = []
        queue.dialog_shown.connect(self.shown.append)

    def call(self, server: str, tool: str, tool_input: dict[str, Any]) -> asyncio.Future[Any]:
        mcp = self.services.mcp
        assert mcp is not None
        return asyncio.ensure_future(mcp.call(server, tool, tool_input, self.ctx))

    async def dialog(self, kind: type) -> Any:
        await wait_for(lambda: isinstance(self.queue.current_dialog, kind), timeout=30)
        return self.queue.current_dialog

    def sampling_rows(self):
        return self.services.audit.list(tool_name=SAMPLING_TOOL)


async def _start(qtbot, services: Services, project: Path, fake: FakeAnthropicServer,
                 **servers: dict[str, Any]) -> App:
    window = QWidget()
    qtbot.addWidget(window)
    window.profile_id = services.profiles.ensure_default().id  # type: ignore[attr-defined]
    await asyncio.to_thread(services.build_tools)
    queue = install_server_requests(window, services)
    assert services.mcp is not None and services.mcp.server_requests is queue.handler
    await services.mcp.apply_config(parse_mcp_config({"mcpServers": servers}).servers)
    for name in servers:
        assert services.mcp.status(name)[0] == "running", services.mcp.server_status(name)
    return App(services, queue, project, fake)


LOOP_SERVER = {"command": sys.executable, "args": [str(HUMAN_LOOP)]}


@contextlib.asynccontextmanager
async def running(qtbot, services: Services, project: Path, fake: FakeAnthropicServer,
                  **servers: dict[str, Any]) -> AsyncIterator[App]:
    """The app with these servers, inside the test: not an async fixture, because pytest-qt
    processes Qt events between fixture setup and the test, when no asyncio loop runs, and
    qasync would resume the servers' reader tasks there (they die)."""
    app = await _start(qtbot, services, project, fake, **servers)
    try:
        yield app
    finally:
        app.queue.abort("test over")
        await services.aclose()


@pytest.fixture
def start(qtbot, services: Services, project: Path, fake_anthropic_env):  # noqa: F811
    """``async with start(loop=…) as app``: the app running these servers."""
    return lambda **servers: running(qtbot, services, project, fake_anthropic_env, **servers)


def _click(button) -> None:
    button.click()


# -- sampling ---------------------------------------------------------------------------------


async def test_sampling_asks_the_person_who_edits_and_approves_and_it_is_recorded(start):
    async with start(loop=LOOP_SERVER) as app:
        app.fake.script(Response.text("Hi from the model"))
        call = app.call("loop", "ask_model", {"prompt": "Tell me everything about me"})
        dialog = await app.dialog(SamplingDialog)
        assert dialog.prompt.server == "loop"
        dialog.user_text.setPlainText("Say hello")
        dialog.max_tokens.setValue(64)
        _click(dialog.approve_button)

        result = await asyncio.wait_for(call, 30)

        assert "model said: Hi from the model" in result.content
        body = app.fake.last_request.body
        assert body["messages"] == [{"role": "user",
                                     "content": [{"type": "text", "text": "Say hello"}]}]
        assert body["max_tokens"] == 64 and not body.get("tools")
        [row] = await asyncio.to_thread(app.sampling_rows)
        assert (row.server_id, row.decision, row.outcome, row.output) == \
            ("loop", "ask", "executed", "Hi from the model")
        assert row.decided_by == "approved by the person"


async def test_the_token_cap_setting_limits_what_the_person_can_allow(start, services):
    services.settings.set(SAMPLING_MAX_TOKENS_CAP.key, 50)
    async with start(loop=LOOP_SERVER) as app:
        call = app.call("loop", "ask_model", {"prompt": "x", "max_tokens": 500})
        dialog = await app.dialog(SamplingDialog)
        assert (dialog.max_tokens.value(), dialog.max_tokens.maximum()) == (50, 50)
        _click(dialog.decline_button)
        await asyncio.wait_for(call, 30)


async def test_installed_before_the_tools_are_built_it_attaches_later(qtbot, db,
                                                                      fresh_data_dir, project):
    services = build_store_services(db, fresh_data_dir, project)  # the app's start path
    window = QWidget()
    qtbot.addWidget(window)
    queue = install_server_requests(window, services)
    assert not services.tools_built  # installing must not build the tools on the GUI thread
    await asyncio.to_thread(services.build_tools)
    assert services.mcp.server_requests is None
    queue.attach(services.mcp)
    assert services.mcp.server_requests is queue.handler
    await services.aclose()


async def test_closing_the_sampling_dialog_declines(start):
    async with start(loop=LOOP_SERVER) as app:
        call = app.call("loop", "ask_model", {"prompt": "x"})
        dialog = await app.dialog(SamplingDialog)
        dialog.close()

        result = await asyncio.wait_for(call, 30)

        assert "sampling failed" in result.content and "declined" in result.content
        assert app.fake.message_requests == []
        [row] = await asyncio.to_thread(app.sampling_rows)
        assert (row.decision, row.outcome) == ("ask", "declined")


async def test_a_deny_rule_answers_without_a_dialog(start):
    async with start(loop=LOOP_SERVER) as app:
        app.services.permissions.rules.add(decision="deny", server_id="loop",
                                           tool_name=SAMPLING_TOOL)
        result = await asyncio.wait_for(app.call("loop", "ask_model", {"prompt": "x"}), 30)
        assert "permission rules refuse" in result.content
        assert app.shown == []


async def test_reference_server_sampling_tool_gets_the_models_answer(start):
    async with start(everything=everything_entry()) as everything:
        everything.fake.script(Response.text("Reference answer"))
        call = everything.call("everything", "trigger-sampling-request",
                               {"prompt": "What is MCP?", "maxTokens": 80})
        dialog = await everything.dialog(SamplingDialog)
        assert "What is MCP?" in dialog.user_text.toPlainText()
        assert dialog.max_tokens.value() == 80
        _click(dialog.approve_button)

        result = await asyncio.wait_for(call, 30)

        assert not result.is_error, result.content
        assert "Reference answer" in result.content
        [row] = await asyncio.to_thread(everything.sampling_rows)
        assert (row.server_id, row.outcome) == ("everything", "executed")


async def test_reference_server_sampling_declined(start):
    async with start(everything=everything_entry()) as everything:
        call = everything.call("everything", "trigger-sampling-request", {"prompt": "x"})
        dialog = await everything.dialog(SamplingDialog)
        _click(dialog.decline_button)
        result = await asyncio.wait_for(call, 30)
        assert "declined" in result.content
        assert everything.fake.message_requests == []


# -- elicitation ------------------------------------------------------------------------------


async def test_form_answer_reaches_the_server(start):
    async with start(loop=LOOP_SERVER) as app:
        call = app.call("loop", "ask_person", {})
        dialog = await app.dialog(ElicitationDialog)
        name, age = dialog.inputs["name"], dialog.inputs["age"]
        assert isinstance(name, QLineEdit) and isinstance(age, QLineEdit)
        name.setText("Ada")
        age.setText("36")
        _click(dialog.accept_button)

        result = await asyncio.wait_for(call, 30)

        assert json.JSONDecoder().raw_decode(result.content)[0] == {
            "action": "accept", "content": {"name": "Ada", "age": 36}}


async def test_reference_server_elicitation_accept(start):
    async with start(everything=everything_entry()) as everything:
        call = everything.call("everything", "trigger-elicitation-request", {})
        dialog = await everything.dialog(ElicitationDialog)
        assert len(dialog.inputs) >= 10  # every field of its showcase form, none skipped
        _click(dialog.accept_button)
        assert dialog.isVisible() and dialog.errors["name"].text() == "is required"
        dialog.inputs["name"].setText("Ada Lovelace")
        dialog.inputs["integer"].setText("7")
        _click(dialog.accept_button)

        result = await asyncio.wait_for(call, 30)

        assert "User provided the requested information" in result.content
        assert "- Name: Ada Lovelace" in result.content
        assert "- Favorite Integer: 7" in result.content
        assert "Monica" not in result.content  # a default shown, never sent


@pytest.mark.parametrize("button, action", [("decline_button", "declined"),
                                            ("cancel_button", "cancelled")])
async def test_reference_server_elicitation_decline_and_cancel(start, button, action):
    async with start(everything=everything_entry()) as everything:
        call = everything.call("everything", "trigger-elicitation-request", {})
        dialog = await everything.dialog(ElicitationDialog)
        dialog.inputs["name"].setText("typed but not sent")
        _click(getattr(dialog, button))
        result = await asyncio.wait_for(call, 30)
        assert f"User {action}" in result.content
        assert "typed but not sent" not in result.content


async def test_an_unsupported_form_is_declined_without_a_dialog(start):
    async with start(loop=LOOP_SERVER) as app:
        result = await asyncio.wait_for(app.call("loop", "ask_person_nested", {}), 30)
        assert json.JSONDecoder().raw_decode(result.content)[0]["action"] == "decline"
        assert app.shown == []


# -- the queue --------------------------------------------------------------------------------


async def test_one_dialog_at_a_time_and_abort_answers_all(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    queue = ServerRequestQueue(host)
    first = asyncio.ensure_future(queue.ask_elicitation("a", "first?", PERSON_FORM))
    second = asyncio.ensure_future(queue.ask_elicitation("b", "second?", PERSON_FORM))
    await wait_for(lambda: queue.pending_count() == 2 and queue.current_dialog is not None)
    shown = queue.current_dialog
    assert shown.message_label.text() == "first?"
    closed: list[int] = []
    shown.finished.connect(closed.append)

    queue.abort("closing")
    queue.abort("again")

    replies = await asyncio.wait_for(asyncio.gather(first, second), 5)
    assert [r.action for r in replies] == ["cancel", "cancel"]
    assert queue.current_dialog is None and len(closed) == 1


async def test_answering_shows_the_next_and_a_withdrawn_request_closes_its_dialog(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    queue = ServerRequestQueue(host)
    first = asyncio.ensure_future(queue.ask_elicitation("a", "first?", PERSON_FORM))
    second = asyncio.ensure_future(queue.ask_elicitation("b", "second?", PERSON_FORM))
    await wait_for(lambda: queue.current_dialog is not None)
    queue.current_dialog.decline_button.click()
    assert (await asyncio.wait_for(first, 5)).action == "decline"
    await wait_for(lambda: queue.current_dialog is not None)
    dialog = queue.current_dialog
    assert dialog.message_label.text() == "second?"
    closed: list[int] = []
    dialog.finished.connect(closed.append)

    second.cancel()  # the server withdrew it, or it timed out
    await wait_for(lambda: queue.current_dialog is None)
    assert len(closed) == 1 and queue.pending_count() == 0


async def test_escape_on_the_shown_dialog_is_a_cancel(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    queue = ServerRequestQueue(host)
    ask = asyncio.ensure_future(queue.ask_elicitation("a", "q?", PERSON_FORM))
    await wait_for(lambda: queue.current_dialog is not None)
    qtbot.keyClick(queue.current_dialog, Qt.Key.Key_Escape)
    assert (await asyncio.wait_for(ask, 5)).action == "cancel"
