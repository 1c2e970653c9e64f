"""The ToolProvider protocol: a source of tools with a routing priority."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import IntEnum
from typing import Protocol, runtime_checkable

from app.core.tools.base import Tool


class ProviderPriority(IntEnum):
    """The higher provider wins a tool name."""

    BUILTIN = -100
    CLI = 50
    CUSTOM = 75
    MCP = 100


@runtime_checkable
class ToolProvider(Protocol):
    id: str
    priority: int

    # Read-only, so a provider may compute it (CliProvider names the programs it found).
    @property
    def display_name(self) -> str: ...

    def is_available(self) -> bool: ...

    def tools(self) -> Sequence[Tool]: ...


class StaticProvider:
    """A provider over a fixed list of tool objects (the built-ins, tests)."""

    def __init__(
        self,
        tools: Iterable[Tool],
        *,
        id: str = "builtin",
        display_name: str = "Built-in",
        priority: int = ProviderPriority.BUILTIN,
    ) -> None:
        self.id = id
        self.display_name = display_name
        self.priority = int(priority)
        self._tools = list(tools)

    def is_available(self) -> bool:
        return True

    def tools(self) -> Sequence[Tool]:
        return list(self._tools)
