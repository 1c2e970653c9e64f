"""MCP Tasks (the 2026-07-28 extension) against a real server on the SDK in the lock
(tests/mcp_servers/modern_server.py with tests/mcp_servers/task_extension.py), over stdio and
Streamable HTTP on 127.0.0.1: a long-running call answered with a task shows as
"task <id> · <status>" progress, its result arrives later and reads like any other; Stop sends
``tasks/cancel`` (the server's task ends cancelled); a failed, abandoned or malformed task is an
error the model can act on; without the extension, or on 2025-11-25, the call is plain."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp import task_follow
from app.core.tools.providers.mcp.provider import McpProvider
from tests.unit.providers.test_mcp_modern_revision import MODERN, Person, _provider, _serve


class Progress:
    """The call's progress lines, as its card would get them."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.task_shown = asyncio.Event()

    def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.lines.append(message or "")
        if (message or "").startswith("task "):
            self.task_shown.set()

    @property
    def task_id(self) -> str:
        return self.lines[0].split(" ")[1]


@pytest.fixture(scope="module")
def tasks_http_url() -> Iterator[str]:
    yield from _serve("http")


async def _started(server: dict[str, Any], person: Person | None = None) -> McpProvider:
    return await _provider(server, person or Person())


@pytest.fixture
def person() -> Person:
    return Person()


@pytest.fixture(params=["stdio", "http"])
async def modern(request, person) -> AsyncIterator[McpProvider]:
    if request.param == "stdio":
        server: dict[str, Any] = {"command": sys.executable, "args": [str(MODERN)]}
    else:
        server = {"type": "http", "url": request.getfixturevalue("tasks_http_url")}
    provider = await _started(server, person)
    yield provider
    await provider.aclose()


async def _states(provider: McpProvider, project: Path) -> dict[str, str]:
    result = await provider.call("modern", "task_states", {}, ToolContext(project_root=project))
    return dict(json.JSONDecoder().raw_decode(result.content)[0])


async def test_a_long_call_becomes_a_task_whose_result_arrives_later(modern, project):
    progress = Progress()
    result = await modern.call("modern", "job", {"seconds": 0.3},
                               ToolContext(project_root=project, progress=progress))
    assert not result.is_error, result.content
    assert result.content.split("\n")[0] == "job done after 0.3 s"
    task_id = progress.task_id
    assert progress.lines[0] == f"task {task_id} · started"
    assert progress.lines[-1] == f"task {task_id} · done"
    assert (await _states(modern, project))[task_id] == "completed"


async def test_stop_sends_tasks_cancel_and_the_servers_task_ends_cancelled(modern, project):
    progress = Progress()
    call = asyncio.ensure_future(modern.call(
        "modern", "job", {"seconds": 120},
        ToolContext(project_root=project, progress=progress)))
    await asyncio.wait_for(progress.task_shown.wait(), 20)
    call.cancel()  # the person's Stop
    with pytest.raises(asyncio.CancelledError):
        await call
    assert (await _states(modern, project))[progress.task_id] == "cancelled"


async def test_input_a_task_asks_for_reaches_the_person_once(modern, person, project):
    progress = Progress()
    result = await modern.call("modern", "signed_job", {},
                               ToolContext(project_root=project, progress=progress))
    assert not result.is_error, result.content
    assert result.content.split("\n")[0] == "job signed by Ada"
    assert person.forms == [("modern", "Who signs the job?")]
    assert f"task {progress.task_id} · waiting for the person" in progress.lines


async def test_a_failed_task_is_an_error_the_model_can_act_on(modern, project):
    result = await modern.call("modern", "job", {"seconds": 0, "ending": "fail"},
                               ToolContext(project_root=project))
    assert result.is_error
    assert "failed on the server: the job's disk is full" in result.content


async def test_a_task_the_server_cancels_is_an_error(modern, project):
    result = await modern.call("modern", "job", {"seconds": 0, "ending": "give_up"},
                               ToolContext(project_root=project))
    assert result.is_error
    assert "cancelled on the server: the server gave up on the job" in result.content


async def test_a_malformed_task_is_a_clear_error_not_a_hang(modern, project):
    result = await asyncio.wait_for(
        modern.call("modern", "job", {"seconds": 0, "ending": "garble"},
                    ToolContext(project_root=project)), 20)
    assert result.is_error
    assert "malformed" in result.content and "completed without a result" in result.content


@pytest.mark.parametrize("flag", ["--no-tasks", "--handshake-only"])
async def test_without_the_extension_the_call_is_plain(flag, project):
    """A server that does not offer tasks, and one on 2025-11-25 (where the extension does not
    exist and Tebiki does not declare it), answer the same call directly."""
    provider = await _started({"command": sys.executable, "args": [str(MODERN), flag]})
    try:
        progress = Progress()
        result = await provider.call("modern", "job", {"seconds": 0.1},
                                     ToolContext(project_root=project, progress=progress))
        assert not result.is_error, result.content
        assert result.content.split("\n")[0] == "job done after 0.1 s"
        assert not progress.task_shown.is_set()
        assert await _states(provider, project) == {}
        revision = await provider.call("modern", "protocol", {}, ToolContext(project_root=project))
        legacy = flag == "--handshake-only"
        assert revision.content.split("\n")[0] == ("2025-11-25" if legacy else "2026-07-28")
        declared = await provider.call("modern", "declared_extensions", {},
                                       ToolContext(project_root=project))
        assert json.JSONDecoder().raw_decode(declared.content)[0] == (
            [] if legacy else ["io.modelcontextprotocol/tasks"])
    finally:
        await provider.aclose()


async def test_a_task_may_outlive_the_calls_timeout(project):
    """The call's timeout bounds the wait for the server's answer; the task it answered with
    is followed past it (the person sees it on the card and can cancel it)."""
    provider = await _started({"command": sys.executable, "args": [str(MODERN)], "timeout": 1})
    try:
        result = await provider.call("modern", "job", {"seconds": 1.5},
                                     ToolContext(project_root=project))
        assert not result.is_error, result.content
        assert result.content.split("\n")[0] == "job done after 1.5 s"
    finally:
        await provider.aclose()


async def test_a_task_past_the_wait_bound_is_cancelled_on_the_server(modern, project,
                                                                     monkeypatch):
    monkeypatch.setattr(task_follow, "MAX_TASK_WAIT_S", 0.5)
    progress = Progress()
    result = await asyncio.wait_for(modern.call(
        "modern", "job", {"seconds": 120},
        ToolContext(project_root=project, progress=progress)), 20)
    assert result.is_error
    assert "did not finish within 0.5 s, so Tebiki cancelled it" in result.content
    assert (await _states(modern, project))[progress.task_id] == "cancelled"


async def test_a_status_notification_ends_the_wait_without_polling(project):
    """Over stdio the server pushes ``notifications/tasks/status``: the completed state it
    carries is taken at once, before the first poll (the task suggests polling every 60 s)."""
    provider = await _started({"command": sys.executable, "args": [str(MODERN)]})
    try:
        progress = Progress()
        result = await asyncio.wait_for(provider.call(
            "modern", "job", {"seconds": 0, "poll_ms": 60_000},
            ToolContext(project_root=project, progress=progress)), 20)
        assert not result.is_error, result.content
        assert result.content.split("\n")[0] == "job done after 0 s"
        polls = await provider.call("modern", "task_polls", {}, ToolContext(project_root=project))
        assert json.JSONDecoder().raw_decode(polls.content)[0].get(progress.task_id, 0) == 0
    finally:
        await provider.aclose()
