"""ToolRegistry: routing by provider priority, schema validation, errors instead of crashes."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from app.core.tools.base import (
    RiskLevel,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
)
from app.core.tools.providers.base import ProviderPriority, StaticProvider
from app.core.tools.registry import ToolRegistry

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
    "required": ["path"],
    "additionalProperties": False,
}


class EchoTool:
    def __init__(self, name: str = "echo", tag: str = "", fail: BaseException | None = None):
        self.spec = ToolSpec(name, "echo", SCHEMA, ToolCategory.READ_ONLY, RiskLevel.LOW)
        self.tag = tag
        self.fail = fail

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        if self.fail is not None:
            raise self.fail
        return ToolResult.ok(f"{self.tag}{input['path']}")


@pytest.fixture
def ctx(project) -> ToolContext:
    return ToolContext(working_dir=project)


async def test_execute_valid_input(ctx):
    registry = ToolRegistry([StaticProvider([EchoTool()])])
    result = await registry.execute("echo", {"path": "a"}, ctx)
    assert result == ToolResult("a", False)


@pytest.mark.parametrize("tool_input, fragment", [
    ({}, "'path' is a required property"),
    ({"path": 3}, "path: 3 is not of type 'string'"),
    ({"path": "a", "limit": 0}, "limit: 0 is less than the minimum of 1"),
    ({"path": "a", "extra": 1}, "Additional properties are not allowed"),
    ("just text", "expected a JSON object"),
    (None, "expected a JSON object"),
])
async def test_invalid_input_is_an_error_the_model_can_fix(ctx, tool_input, fragment):
    registry = ToolRegistry([StaticProvider([EchoTool()])])
    result = await registry.execute("echo", tool_input, ctx)
    assert result.is_error
    assert fragment in result.content
    assert "call the tool again" in result.content.lower()


async def test_unknown_tool_lists_available(ctx):
    registry = ToolRegistry([StaticProvider([EchoTool()])])
    result = await registry.execute("nope", {"path": "a"}, ctx)
    assert result.is_error and "Unknown tool: 'nope'" in result.content and "echo" in result.content


async def test_tool_exception_becomes_error(ctx):
    registry = ToolRegistry([StaticProvider([EchoTool(fail=RuntimeError("boom"))])])
    result = await registry.execute("echo", {"path": "a"}, ctx)
    assert result.is_error and "RuntimeError: boom" in result.content


async def test_cancellation_propagates(ctx):
    registry = ToolRegistry([StaticProvider([EchoTool(fail=asyncio.CancelledError())])])
    with pytest.raises(asyncio.CancelledError):
        await registry.execute("echo", {"path": "a"}, ctx)


async def test_higher_priority_provider_wins_a_name(ctx):
    low = StaticProvider([EchoTool(tag="builtin:")], id="builtin")
    high = StaticProvider([EchoTool(tag="mcp:")], id="mcp", priority=ProviderPriority.MCP)
    mid = StaticProvider([EchoTool(tag="cli:")], id="cli", priority=ProviderPriority.CLI)
    registry = ToolRegistry([high, low, mid])
    assert (await registry.execute("echo", {"path": "x"}, ctx)).content == "mcp:x"
    assert registry.provider_of("echo").id == "mcp"
    registry.unregister_provider("mcp")
    assert (await registry.execute("echo", {"path": "x"}, ctx)).content == "cli:x"


def test_broken_provider_does_not_hide_others():
    class Broken:
        id, display_name, priority = "broken", "Broken", 100

        def is_available(self) -> bool:
            return True

        def tools(self):
            raise OSError("server died")

    registry = ToolRegistry([Broken(), StaticProvider([EchoTool()])])
    assert registry.names() == ["echo"]


def test_definitions_for_only_enabled_existing_tools():
    registry = ToolRegistry([StaticProvider([EchoTool("a"), EchoTool("b")])])
    defs = registry.definitions_for(["b", "missing"])
    assert defs == [{"name": "b", "description": "echo", "input_schema": SCHEMA}]


def test_tool_context_defaults_and_paths(project):
    ctx = ToolContext(working_dir=str(project), allowed_write_dirs=["doc", project / "out"])
    assert ctx.working_dir == project
    assert ctx.allowed_write_dirs == (project / "doc", project / "out")
    assert ctx.allowed_commands == ("ls", "cat", "head", "wc", "find", "grep", "tree")
    assert ctx.git_permission.value == "read_only"
    assert ctx.allow_private_network is False
    with pytest.raises(ValueError):
        ToolContext(working_dir=project, shell_timeout_s=0)


def test_default_registry_builds():
    from app.core.tools.builtin import default_registry

    registry = default_registry()
    for spec in registry.specs():
        assert spec.server_id == "builtin"
        assert spec.definition()["input_schema"]["type"] == "object"
