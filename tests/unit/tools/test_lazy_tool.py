"""LazyTool: the spec now, the implementation imported on first use in a worker thread."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from app.core.tools.base import RiskLevel, ToolCategory, ToolContext, ToolSpec
from app.core.tools.builtin import LAZY_BUILTINS, default_registry
from app.core.tools.lazy import LazyTool

SPEC = ToolSpec("echo_lazy", "echoes", {"type": "object"}, ToolCategory.READ_ONLY, RiskLevel.LOW)

IMPLEMENTATION = '''
import threading
from app.core.tools.base import RiskLevel, ToolCategory, ToolResult, ToolSpec

IMPORTED_IN = threading.current_thread().name
CLOSED = []


class EchoTool:
    spec = ToolSpec("echo_lazy", "{description}", {{"type": "object"}}, ToolCategory.READ_ONLY,
                    RiskLevel.LOW)

    async def execute(self, input, ctx):
        return ToolResult.ok(f"echo {{input['text']}}")

    async def aclose(self):
        CLOSED.append(True)


def create():
    return EchoTool()
'''


@pytest.fixture
def implementation(tmp_path: Path, monkeypatch):
    def write(name: str, description: str = "echoes") -> str:
        (tmp_path / f"{name}.py").write_text(IMPLEMENTATION.format(description=description))
        return name

    monkeypatch.syspath_prepend(str(tmp_path))
    yield write
    for name in [m for m in sys.modules if m.startswith("lazy_impl_")]:
        del sys.modules[name]


def _ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(working_dir=tmp_path)


async def test_spec_without_import_then_import_in_worker_thread(implementation, tmp_path):
    module = implementation("lazy_impl_echo")
    tool = LazyTool(SPEC, module)
    assert tool.spec is SPEC and module not in sys.modules and not tool.loaded

    result = await tool.execute({"text": "hi"}, _ctx(tmp_path))

    assert result.content == "echo hi" and not result.is_error
    assert tool.loaded
    assert threading.current_thread().name != sys.modules[module].IMPORTED_IN
    await tool.aclose()
    assert sys.modules[module].CLOSED == [True]


async def test_concurrent_first_calls_build_one_implementation(implementation, tmp_path):
    import asyncio

    tool = LazyTool(SPEC, implementation("lazy_impl_once"))
    first, second = await asyncio.gather(tool.load(), tool.load())
    assert first is second


async def test_implementation_with_another_spec_is_refused(implementation, tmp_path):
    tool = LazyTool(SPEC, implementation("lazy_impl_other", description="something else"))
    with pytest.raises(RuntimeError, match="spec differs"):
        await tool.execute({"text": "hi"}, _ctx(tmp_path))
    assert not tool.loaded


async def test_aclose_before_use_imports_nothing(implementation):
    module = implementation("lazy_impl_unused")
    await LazyTool(SPEC, module).aclose()
    assert module not in sys.modules


async def test_builtin_web_tools_are_lazy_and_match_their_implementations():
    registry = default_registry()
    for spec, module in LAZY_BUILTINS:
        tool = registry.get(spec.name)
        assert isinstance(tool, LazyTool) and tool.module == module
        loaded = await tool.load()  # raises if the light spec drifted from the real one
        assert loaded.spec == spec
    await registry.aclose()


async def test_unimportable_implementation_is_an_error_and_not_retried(tmp_path, monkeypatch):
    (tmp_path / "lazy_impl_broken.py").write_text("raise ImportError('missing dependency')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    attempts: list[str] = []
    import app.core.tools.lazy as lazy

    real_import_all = lazy.import_all

    def counting(names):
        attempts.append(threading.current_thread().name)
        return real_import_all(names)

    monkeypatch.setattr(lazy, "import_all", counting)
    tool = LazyTool(SPEC, "lazy_impl_broken")
    with pytest.raises(RuntimeError, match="echo_lazy is unavailable"):
        await tool.load()
    assert len(attempts) == 1 and attempts[0] != threading.current_thread().name
    assert "lazy_impl_broken" not in sys.modules


def test_every_lazy_builtin_is_warmed_up_before_runs():
    from app.core.warmup import RUN_MODULES

    assert {module for _, module in LAZY_BUILTINS} <= set(RUN_MODULES)
