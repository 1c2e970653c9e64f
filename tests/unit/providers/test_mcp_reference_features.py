"""Client capabilities against the real reference servers (issue 19), installed by
``make mcp-reference`` into tests/.mcp-reference: server-filesystem takes the project folder
from MCP roots and follows it when it changes; server-everything's task-only tool is hidden,
its instructions are kept, and its resources and prompts are reachable."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from app.core.tools.base import ToolContext
from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.provider import McpProvider
from tests.mcp_reference import everything_entry, filesystem_entry


def _configs(**entries: dict) -> dict[str, McpServerConfig]:
    return parse_mcp_config({"mcpServers": entries}).servers


def _text(content: str) -> str:
    return content.split("\n\n[structured content]")[0]


async def _allowed_until(provider: McpProvider, ctx: ToolContext, folder: Path) -> str:
    """server-filesystem asks roots/list on its own schedule (after initialization, and after
    a list_changed notification): poll its allowed directories until ``folder`` is there."""
    deadline = time.monotonic() + 30
    while True:
        allowed = await provider.call("fs", "list_allowed_directories", {}, ctx)
        if str(folder) in allowed.content:
            return _text(allowed.content)
        assert time.monotonic() < deadline, allowed.content
        await asyncio.sleep(0.05)


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(project_root=project)


async def test_server_filesystem_serves_the_project_from_roots_and_follows_changes(
        project, tmp_path, ctx):
    (project / "hello.txt").write_text("hi from the project")
    other = (tmp_path / "other").resolve()
    other.mkdir()
    (other / "there.txt").write_text("hi from elsewhere")
    # No directory arguments: it has only what roots/list answers.
    provider = McpProvider(_configs(fs=filesystem_entry()), roots=[project])
    try:
        await provider.start()
        assert provider.server_status("fs").state == "running", provider.server_status("fs")
        allowed = await _allowed_until(provider, ctx, project)
        assert allowed.splitlines()[1:] == [str(project)], allowed
        read = await provider.call("fs", "read_text_file",
                                   {"path": str(project / "hello.txt")}, ctx)
        assert _text(read.content) == "hi from the project", read.content

        # The person opened another project; the app sets it from whichever thread builds
        # its services, not necessarily the event loop's.
        await asyncio.to_thread(provider.set_roots, [other])
        allowed = await _allowed_until(provider, ctx, other)
        assert str(project) not in allowed
        outside = await provider.call("fs", "read_text_file",
                                      {"path": str(project / "hello.txt")}, ctx)
        assert outside.is_error  # the old project is no longer a root
    finally:
        await provider.aclose()


@pytest.fixture
async def everything(project):
    provider = McpProvider(_configs(ev=everything_entry()), roots=[project])
    await provider.start()
    assert provider.server_status("ev").state == "running", provider.server_status("ev")
    yield provider
    await provider.aclose()


async def test_server_everything_task_only_tool_is_hidden_with_a_note(everything):
    names = {tool.spec.name for tool in everything.tools()}
    assert "ev__echo" in names
    assert "ev__simulate-research-query" not in names
    status = everything.server_status("ev")
    assert status.hidden_tools >= 1 and "MCP tasks" in status.message


async def test_server_everything_instructions_are_kept(everything):
    instructions = everything.instructions()
    assert set(instructions) == {"ev"} and len(instructions["ev"]) > 20


async def test_server_everything_sees_the_project_as_its_root(everything, ctx, project):
    result = await everything.call("ev", "get-roots-list", {}, ctx)
    assert not result.is_error and project.as_uri() in result.content, result.content


async def test_server_everything_resources_and_prompts(everything, ctx):
    resources = await everything.list_resources("ev")
    assert resources and all("uri" in r for r in resources)
    first = resources[0]["uri"]
    contents = await everything.read_resource("ev", first)
    assert contents and contents[0]["uri"] == first
    tool = next(t for t in everything.tools() if t.spec.name == "ev__read_resource")
    read = await tool.execute({"uri": first}, ctx)
    assert not read.is_error and read.content.strip(), read.content

    prompts = {p["name"]: p for p in await everything.list_prompts("ev")}
    assert "simple-prompt" in prompts and "args-prompt" in prompts
    prompt = await everything.get_prompt("ev", "args-prompt", {"city": "Lyon"})
    assert "Lyon" in str(prompt["messages"])
