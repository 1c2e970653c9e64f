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
from app.core.tools.params.declaration import Params, param
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
    return ToolContext(project_root=project)


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


async def test_input_validated_for_the_routed_tool_is_not_checked_again(ctx):
    tool = EchoTool()
    registry = ToolRegistry([StaticProvider([tool])])
    calls: list[str] = []
    registry.validate = lambda name, tool_input: calls.append(name)  # type: ignore[method-assign]

    result = await registry.execute("echo", {"path": "a"}, ctx, validated=tool)

    assert result == ToolResult("a", False) and calls == []


async def test_input_validated_for_another_tool_is_checked_again(ctx):
    registry = ToolRegistry([StaticProvider([EchoTool()])])
    replaced = EchoTool()  # the name now routes elsewhere (the tool list changed meanwhile)

    result = await registry.execute("echo", {}, ctx, validated=replaced)
    gone = await registry.execute("nope", {"path": "a"}, ctx, validated=replaced)

    assert result.is_error and "'path' is a required property" in result.content
    assert gone.is_error and "Unknown tool: 'nope'" in gone.content


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
    ctx = ToolContext(project_root=str(project), allowed_write_dirs=["doc", project / "out"])
    assert ctx.project_root == project
    assert ctx.allowed_write_dirs == (project / "doc", project / "out")
    assert ctx.allowed_commands == ("ls", "cat", "head", "wc", "find", "grep", "tree")
    assert ctx.git_permission.value == "read_only"
    assert ctx.allow_private_network is False
    with pytest.raises(ValueError):
        ToolContext(project_root=project, shell_timeout_s=0)


def test_default_registry_builds():
    from app.core.tools.default_registry import default_registry

    registry = default_registry()
    for spec in registry.specs():
        assert spec.server_id == "builtin"
        assert spec.definition()["input_schema"]["type"] == "object"


# -- tools with typed params: the params class is the schema and the one validation ------------

class _EchoParams(Params):
    path: str = param(description="What to echo")
    limit: int = param(default=10, minimum=1)


class ParamsEchoTool:
    def __init__(self) -> None:
        # input_schema deliberately disagrees with the params: the params must win everywhere.
        self.spec = ToolSpec("typed", "echo", {"type": "object"}, ToolCategory.READ_ONLY,
                             RiskLevel.LOW, params=_EchoParams)

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(input["path"])


def test_definition_schema_comes_from_params():
    registry = ToolRegistry([StaticProvider([ParamsEchoTool()])])
    (definition,) = registry.definitions_for(["typed"])
    assert definition["input_schema"] == _EchoParams.json_schema()
    assert definition["input_schema"]["required"] == ["path"]


@pytest.mark.parametrize("tool_input, fragment", [
    ({}, "- path: required"),
    ({"path": 3}, "- path: must be a string"),
    ({"path": "a", "limit": 0}, "- limit: must be at least 1 (got 0)"),
    ({"path": "a", "extra": 1}, "extra"),
])
async def test_params_validate_with_the_registry_message_shape(ctx, tool_input, fragment):
    registry = ToolRegistry([StaticProvider([ParamsEchoTool()])])
    result = await registry.execute("typed", tool_input, ctx)
    assert result.is_error
    assert result.content.startswith("Invalid input for typed:\n")
    assert fragment in result.content
    assert "Expected properties: path, limit; required: path." in result.content
    assert not registry._validators  # jsonschema never consulted for a params tool


async def test_params_valid_input_runs(ctx):
    registry = ToolRegistry([StaticProvider([ParamsEchoTool()])])
    assert await registry.execute("typed", {"path": "a", "limit": 2.0}, ctx) == ToolResult("a")


# -- built-in tools are discovered, not listed ------------------------------------------------

def test_tool_modules_are_found_by_convention(tmp_path, monkeypatch):
    package = tmp_path / "fake_tools_pkg"
    (package / "nested").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "nested" / "__init__.py").write_text("def create():\n    return []\n")
    (package / "alpha.py").write_text("def create():\n    return 'alpha'\n")
    (package / "beta.py").write_text("WARMUP_IMPORTS = ('json',)\ndef create():\n    return []\n")
    (package / "helper.py").write_text("VALUE = 1\n")  # shared helper: no create()
    (package / "_private.py").write_text("raise RuntimeError('private modules are not imported')\n")
    (package / "heavy.py").write_text("raise RuntimeError('lazy modules are not imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from app.core.tools.builtin import discover_tool_modules

    found = discover_tool_modules("fake_tools_pkg", [str(package)],
                                  skip={"fake_tools_pkg.heavy"})
    assert [m.__name__ for m in found] == ["fake_tools_pkg.alpha", "fake_tools_pkg.beta"]


def test_every_builtin_module_with_create_is_registered():
    from app.core.tools.builtin import tool_modules
    from app.core.tools.default_registry import default_registry

    registry = default_registry()
    names: set[str] = set()
    for module in tool_modules():
        made = module.create()
        names |= {t.spec.name for t in (made if isinstance(made, list) else [made])}
    assert set(registry.names()) == names
    assert {"read_file", "write_file", "shell_exec", "git_ops", "web_fetch",
            "web_search"} <= names


def test_warm_up_list_comes_from_the_tools():
    from app.core.tools.builtin import tool_modules
    from app.core.warmup import BASE_RUN_MODULES, run_modules

    modules = run_modules()
    assert set(BASE_RUN_MODULES) <= set(modules)
    for module in tool_modules():
        assert set(getattr(module, "WARMUP_IMPORTS", ())) <= set(modules), module.__name__
    assert len(modules) == len(set(modules))
