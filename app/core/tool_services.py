"""The tools part of ``Services`` (``ToolServices``) and how it follows the project folder.

The project folder decides where the permission checks draw "inside", the MCP servers' roots,
and which ``.tebiki/tools.toml`` adds tools. Reading that file is the slow part (a disk, a
hostile file): ``ProjectToolsReloader`` does it in a worker thread for File → Open Folder.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.permissions.service import ToolPermissionService
    from app.core.sandbox import Sandbox
    from app.core.tools.providers.custom import CustomToolsProvider
    from app.core.tools.providers.mcp.config.store import McpConfigStore
    from app.core.tools.providers.mcp.provider import McpProvider
    from app.core.tools.registry import ToolRegistry


@dataclass
class ToolServices:
    """What a run or a tool call needs: built after the window is ready (see app.core.services)."""

    registry: ToolRegistry
    permissions: ToolPermissionService
    # The OS sandbox every program runs in; see app_sandbox.
    sandbox: Sandbox
    mcp: McpProvider | None = None
    mcp_config: McpConfigStore | None = None


def custom_tools(registry: ToolRegistry) -> CustomToolsProvider | None:
    from app.core.tools.providers.custom import CustomToolsProvider

    return next((p for p in registry.providers() if isinstance(p, CustomToolsProvider)), None)


def point_tools_at(tools: ToolServices, project_root: Path | None) -> None:
    """What follows the project folder at once: the permission checks and the MCP roots."""
    tools.permissions.project_root = project_root.resolve() if project_root is not None else None
    # Its secret files and git history, read now in a worker thread: the first model call
    # waits only for what is left of that read.
    tools.permissions.start_learning_secrets(project_root)
    if tools.mcp is not None:  # the servers' roots: the open project folder
        tools.mcp.set_roots([project_root] if project_root is not None else [])


def apply_project_root(tools: ToolServices, project_root: Path | None, *,
                       reread: bool = True) -> None:
    """All of it on this thread (start-up's worker, tests)."""
    point_tools_at(tools, project_root)
    custom = custom_tools(tools.registry)
    # reread=False: only when the folder changed since the provider read its files.
    if custom is not None and (reread or custom.project_root != project_root):
        custom.set_project_root(project_root)  # the project's .tebiki/tools.toml
        tools.registry.refresh()


class ProjectToolsReloader:
    """Re-reads the project's tools.toml off the calling (GUI) thread, newest folder last."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one reader at a time

    async def follow(self, tools: ToolServices, project_root: Path | None,
                     current: Callable[[], Path | None]) -> None:
        """Point the tools at ``project_root``; reread its tools.toml unless ``current()`` (the
        folder open now) has moved on meanwhile, in which case that folder's own call loads it."""
        import asyncio

        point_tools_at(tools, project_root)
        custom = custom_tools(tools.registry)
        if custom is None:
            return

        def reread() -> bool:
            with self._lock:
                if current() != project_root:
                    return False
                custom.set_project_root(project_root)
                return True

        if await asyncio.to_thread(reread):
            tools.registry.refresh()
