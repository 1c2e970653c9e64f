"""The provider: which files are read, reloading them, and the change signature."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.tools.base import Tool
from app.core.tools.providers.base import ProviderPriority

if TYPE_CHECKING:
    from app.core.tools.providers.custom.tool import CustomTool

TOOLS_FILE = "tools.toml"
PROJECT_TOOLS_FILE = Path(".tebiki") / "tools.toml"


def _load(path: Path) -> tuple[list[CustomTool], list[str]]:
    """``load_tools_file(path)``; a missing file (the usual case) is answered without importing
    the TOML loader, the template parser and the tool module (~10 ms of start-up)."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return [], []  # what load_tools_file answers for it
    except OSError:
        pass  # load_tools_file reports why it cannot be read
    from app.core.tools.providers.custom.loading import load_tools_file

    return load_tools_file(path)




# -- the provider -------------------------------------------------------------------------------

class CustomToolsProvider:
    """Tools from ``<data dir>/tools.toml`` and ``<project>/.tebiki/tools.toml``.

    ``reload()`` (or ``reload_if_changed()``) re-reads the files; call ``registry.refresh()``
    afterwards so routing sees the new list. ``load_errors`` lists what could not be loaded.
    """

    id = "custom"
    display_name = "Custom tools (tools.toml)"
    priority = int(ProviderPriority.CUSTOM)

    def __init__(self, data_dir: str | os.PathLike[str] | None,
                 project_root: str | os.PathLike[str] | None = None, *,
                 reserved_names: Collection[str]) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.project_root = Path(project_root) if project_root is not None else None
        # Names a project file may not define: the built-in tools' (handed in by
        # app.core.tools.default_registry; providers do not import the built-in tool modules).
        self._reserved = frozenset(reserved_names)
        self.load_errors: list[str] = []
        self._tools: list[CustomTool] = []
        self._signature: tuple[Any, ...] = ()
        self.reload()

    def files(self) -> list[Path]:
        """The files read, lowest precedence first."""
        out = []
        if self.data_dir is not None:
            out.append(self.data_dir / TOOLS_FILE)
        if self.project_root is not None:
            out.append(self.project_root / PROJECT_TOOLS_FILE)
        return out

    def set_project_root(self, project_root: str | os.PathLike[str] | None) -> list[str]:
        self.project_root = Path(project_root) if project_root is not None else None
        return self.reload()

    def reload(self) -> list[str]:
        """Re-read the files; returns (and keeps) the load errors."""
        signature = self._current_signature()
        by_name: dict[str, CustomTool] = {}
        errors: list[str] = []
        for path in self.files():
            tools, problems = _load(path)
            errors.extend(problems)
            for tool in tools:
                if self._is_project_file(path) and tool.name in self.reserved_names():
                    errors.append(
                        f"{tool.source}: tool '{tool.name}' is not loaded: a project's tools.toml "
                        f"cannot replace the built-in {tool.name}. Rename it, or define it in "
                        f"your own {TOOLS_FILE} in the data folder.")
                    continue
                outside = (tool.folders_outside(self.project_root)
                           if self._is_project_file(path) and self.project_root is not None
                           else [])
                if outside:
                    # The sandbox is the person's wall; a cloned repository must not widen it.
                    errors.append(
                        f"{tool.source}: tool '{tool.name}' is not loaded: a project's "
                        f"tools.toml can only make folders inside the project writable, not "
                        f"{', '.join(outside)}. Define it in your own {TOOLS_FILE} in the data "
                        "folder to write there.")
                    continue
                if self._is_project_file(path):
                    # Rules the person wrote for their own custom tools must never approve a
                    # repository's same-named replacement: project tools are their own server.
                    from app.core.tools.providers.custom.tool import PROJECT_SERVER_ID

                    tool = replace(tool, server_id=PROJECT_SERVER_ID)
                by_name.pop(tool.name, None)  # the later file wins, and lists it in its order
                by_name[tool.name] = tool
        self._tools = list(by_name.values())
        self.load_errors = errors
        self._signature = signature
        return list(errors)

    def reserved_names(self) -> frozenset[str]:
        return self._reserved

    def _is_project_file(self, path: Path) -> bool:
        return self.project_root is not None and path == self.project_root / PROJECT_TOOLS_FILE

    def reload_if_changed(self) -> bool:
        """Reload when a file appeared, vanished or changed; True when it reloaded."""
        if self._current_signature() == self._signature:
            return False
        self.reload()
        return True

    def _current_signature(self) -> tuple[Any, ...]:
        out: list[tuple[str, int | None, int | None, int | None]] = []
        for path in self.files():
            try:
                st = os.stat(path)
                out.append((str(path), st.st_mtime_ns, st.st_size, st.st_ino))
            except OSError:
                out.append((str(path), None, None, None))
        return tuple(out)

    def unavailable(self) -> dict[str, str]:
        """Tool name → why its program cannot run now (for the tools list)."""
        out = {}
        for tool in self._tools:
            problem = tool.program_problem(self.project_root)
            if problem is not None:
                out[tool.name] = problem
        return out

    def is_available(self) -> bool:
        return True  # a missing file just means no tools; errors are in load_errors

    def tools(self) -> Sequence[Tool]:
        return list(self._tools)
