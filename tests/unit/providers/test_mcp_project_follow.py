"""Stdio MCP servers follow the open project (see ``mcp.project_follow``), against real servers:
``tests/mcp_servers/cwd_server.py`` (reports its working folder and pid, and has a long call the
test releases) over stdio, and the demo server over streamable HTTP."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.project_follow import WAITING_NOTE
from app.core.tools.providers.mcp.provider import McpProvider
from tests.mcp_servers.http_demo import HttpDemo

CWD_SERVER = Path(__file__).parents[2] / "mcp_servers" / "cwd_server.py"
WAIT_S = 30.0


def _configs(**entries: dict) -> dict[str, McpServerConfig]:
    return parse_mcp_config({"mcpServers": entries}).servers


def _stdio(**fields: object) -> dict:
    return {"command": sys.executable, "args": [str(CWD_SERVER)], **fields}


async def _until(condition: Callable[[], bool], what: str) -> None:
    """Poll a condition a server process changes on its own schedule (a file it writes)."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


def _folder(path: Path) -> Path:
    path = path.resolve()
    path.mkdir()
    return path


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(project_root=project)


@pytest.fixture
def second(tmp_path: Path) -> Path:
    return _folder(tmp_path / "second project")


@pytest.fixture
def http_demo() -> Iterator[HttpDemo]:
    server = HttpDemo("--rich")
    yield server
    server.kill()


async def _where(provider: McpProvider, ctx: ToolContext, server: str = "files") -> str:
    result = await provider.call(server, "where", {}, ctx)
    assert not result.is_error, result.content
    return result.content.split("\n\n")[0]


async def _hold_then_move(provider: McpProvider, ctx: ToolContext, tmp_path: Path,
                          second: Path) -> tuple[str, asyncio.Task]:
    """Start ``provider``, note where its server runs, start a long ``hold`` call (ended by
    writing ``tmp_path / "release"``), then open ``second``: the restart is due, not done."""
    started = tmp_path / "started"
    await provider.start()
    before = await _where(provider, ctx)
    held = asyncio.create_task(provider.call(
        "files", "hold", {"started": str(started), "release": str(tmp_path / "release")}, ctx))
    await _until(started.exists, "the long call to start")
    provider.set_roots([second])
    return before, held


async def test_a_server_moves_to_the_new_project_and_shows_the_restart(project, second, ctx):
    provider = McpProvider(_configs(files=_stdio()), roots=[project])
    seen: list[str] = []
    provider.subscribe(lambda name: seen.append(provider.server_status(name).state))
    try:
        await provider.start()
        first = await _where(provider, ctx)
        assert first.startswith(f"cwd={project} ")

        seen.clear()
        provider.set_roots([second])
        moved = await _where(provider, ctx)
        assert moved.startswith(f"cwd={second} ")
        assert moved.split("pid=")[1] != first.split("pid=")[1]  # a new process
        assert seen == ["stopped", "starting", "running"]  # shown like any restart

        runs = provider._connections["files"].runs
        provider.set_roots([second])  # the same project again: nothing happens
        assert await _where(provider, ctx) == moved
        assert provider._connections["files"].runs == runs
    finally:
        await provider.aclose()


async def test_a_configured_cwd_and_http_servers_stay_as_they_are(
        project, second, tmp_path, ctx, http_demo):
    chosen = _folder(tmp_path / "chosen")
    await http_demo.start()
    provider = McpProvider(_configs(files=_stdio(), pinned=_stdio(cwd=str(chosen)),
                                    web={"url": http_demo.url}), roots=[project])
    try:
        await provider.start()
        assert {s.name: s.state for s in provider.statuses()} == {
            "files": "running", "pinned": "running", "web": "running"}
        pinned = await _where(provider, ctx, "pinned")
        assert pinned.startswith(f"cwd={chosen} ")
        runs = {name: conn.runs for name, conn in provider._connections.items()}

        provider.set_roots([second])
        assert (await _where(provider, ctx)).startswith(f"cwd={second} ")  # it follows
        assert await _where(provider, ctx, "pinned") == pinned  # same folder, same process
        web = await provider.call("web", "roots", {}, ctx)
        assert not web.is_error, web.content
        assert second.as_uri() in web.content  # told about the new roots, not restarted
        assert {name: conn.runs for name, conn in provider._connections.items()} == {
            **runs, "files": runs["files"] + 1}
    finally:
        await provider.aclose()


async def test_a_call_in_flight_finishes_then_the_server_restarts_in_the_new_project(
        project, second, tmp_path, ctx):
    release = tmp_path / "release"
    provider = McpProvider(_configs(files=_stdio()), roots=[project])
    try:
        before, held = await _hold_then_move(provider, ctx, tmp_path, second)
        status = provider.server_status("files")
        assert status.state == "running" and status.message.endswith(WAITING_NOTE)
        waiting = asyncio.create_task(_where(provider, ctx))  # waits for the restart
        given_up = asyncio.create_task(_where(provider, ctx))
        await asyncio.sleep(0)  # one loop turn: both run up to their wait (no I/O before it)
        given_up.cancel()  # Stop on a waiting call must not cancel the restart
        assert not held.done() and not waiting.done()

        release.write_text("go")
        result = await held
        assert not result.is_error, result.content
        assert result.content.split("\n\n")[0] == before  # the old process, not cut off
        after = await waiting
        assert after.startswith(f"cwd={second} ")  # never ran in the old folder
        assert after.split("pid=")[1] != before.split("pid=")[1]
        assert not provider.server_status("files").message.endswith(WAITING_NOTE)
        with pytest.raises(asyncio.CancelledError):
            await given_up
    finally:
        await provider.aclose()


async def test_going_back_before_the_restart_keeps_the_server(project, second, tmp_path, ctx):
    started, release = tmp_path / "started", tmp_path / "release"
    provider = McpProvider(_configs(files=_stdio()), roots=[project])
    try:
        await provider.start()
        before = await _where(provider, ctx)
        message = provider.server_status("files").message
        held = asyncio.create_task(provider.call(
            "files", "hold", {"started": str(started), "release": str(release)}, ctx))
        await _until(started.exists, "the long call to start")

        provider.set_roots([second])
        provider.set_roots([project])  # back to the project the server runs in
        release.write_text("go")
        assert not (await held).is_error
        assert await _where(provider, ctx) == before  # same folder, same process
        assert provider.server_status("files").message == message
    finally:
        await provider.aclose()


async def test_a_prompt_asked_for_while_the_restart_is_due_waits_for_it(
        project, second, tmp_path, ctx):
    # Resources and prompts are requests to the server like a tool call: none may reach the
    # old folder's process once the project moved.
    release = tmp_path / "release"
    provider = McpProvider(_configs(files=_stdio()), roots=[project])
    try:
        before, held = await _hold_then_move(provider, ctx, tmp_path, second)
        asked = asyncio.create_task(provider.get_prompt("files", "here"))
        await asyncio.sleep(0)  # one loop turn: it runs up to its wait (no I/O before it)
        assert not asked.done()
        release.write_text("go")
        assert not (await held).is_error
        prompt = await asked
        text = str(prompt["messages"][0]["content"])
        assert f"cwd={second} " in text  # answered by the restarted server
        assert before.split("pid=")[1] not in text
    finally:
        await provider.aclose()
