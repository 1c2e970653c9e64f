"""A tool whose implementation is imported on first use, in a worker thread.

Start-up needs every tool's spec (the tools list, permission rules, the request's tool
definitions) but not its implementation. Tools built on large libraries (the web tools: an HTTP
stack and HTML converters) are registered as a ``LazyTool``: the spec is light, and the module
that does the work is imported the first time the tool runs, or earlier by the run warm-up.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from typing import Any

from app.core.tools.base import Tool, ToolContext, ToolResult, ToolSpec
from app.core.warmup import import_all


class LazyTool:
    """``spec`` now; ``module.create()`` on first ``execute``.

    The implementation's spec must equal ``spec`` (checked when it loads), so what the model
    and the permission rules were told is what runs.
    """

    def __init__(self, spec: ToolSpec, module: str) -> None:
        self.spec = spec
        self.module = module
        self._tool: Tool | None = None
        self._lock = asyncio.Lock()

    @property
    def loaded(self) -> bool:
        return self._tool is not None

    async def load(self) -> Tool:
        async with self._lock:
            if self._tool is None:
                if self.module not in sys.modules:  # off the GUI thread (app.core.warmup)
                    await asyncio.to_thread(import_all, (self.module,))
                module = sys.modules.get(self.module)
                if module is None:  # import_all logged why; never retried on this thread
                    raise RuntimeError(f"{self.spec.name} is unavailable: its module "
                                       f"{self.module} could not be imported (see the log)")
                tool = module.create()
                if tool.spec != self.spec:
                    raise RuntimeError(f"{self.module}.create() made a tool whose spec differs "
                                       f"from the one registered for {self.spec.name}")
                self._tool = tool
            return self._tool

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        tool = await self.load()
        return await tool.execute(input, ctx)

    async def aclose(self) -> None:
        tool = self._tool
        close = getattr(tool, "aclose", None)
        if close is not None:
            await close()
