"""The tool registry the app starts from, and the providers that build on the built-in tools.

Here and not in app.core.tools.builtin: that package is the built-in tools' plug-in folder (a
module each, found by looking); putting tools and providers together is done outside it. The
built-in tools and the other sources of tools (app.core.tools.providers) do not import each
other: what a provider needs of the built-ins is handed to it here.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from app.core.tools.base import Tool
from app.core.tools.builtin import builtin_tools
from app.core.tools.providers.base import StaticProvider
from app.core.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from app.core.tools.providers.cli import CliProvider
    from app.core.tools.providers.custom import CustomToolsProvider


def builtin_provider() -> StaticProvider:
    return StaticProvider(builtin_tools(), id="builtin", display_name="Built-in")


def default_registry() -> ToolRegistry:
    return ToolRegistry([builtin_provider()])


@functools.cache
def builtin_tool_names() -> frozenset[str]:
    return frozenset(tool.spec.name for tool in builtin_tools())


def cli_provider(aliases: Mapping[str, str | Sequence[str]] | None = None, *,
                 search_path: str | None = None, suggest_enhanced_tools: bool = True,
                 platform: str | None = None) -> CliProvider:
    """grep_search on ripgrep and glob_search on fd, over the built-in tools of those names."""
    # Imported here: the registry alone (permission checks without the app) needs none of it.
    from app.core.tools.providers.cli import CliProvider

    tools: dict[str, Tool] = {tool.spec.name: tool for tool in builtin_tools()}
    return CliProvider(aliases, builtin_tools=tools, search_path=search_path,
                       suggest_enhanced_tools=suggest_enhanced_tools, platform=platform)


def custom_tools_provider(data_dir: str | os.PathLike[str] | None,
                          project_root: str | os.PathLike[str] | None = None
                          ) -> CustomToolsProvider:
    """The tools.toml tools; a project's file may not replace a built-in tool."""
    from app.core.tools.providers.custom import CustomToolsProvider

    return CustomToolsProvider(data_dir, project_root, reserved_names=builtin_tool_names())
