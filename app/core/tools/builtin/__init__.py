"""Built-in tools, one module each. ``default_registry()`` holds all of them."""

from __future__ import annotations

import importlib
import logging

from app.core.tools.base import Tool
from app.core.tools.providers.base import StaticProvider
from app.core.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

# Each module exposes ``create() -> Tool`` (or a list of tools, e.g. shell_exec + shell_jobs).
BUILTIN_MODULES: tuple[str, ...] = (
    "read_file",
    "write_file",
    "edit_file",
    "glob_search",
    "grep_search",
    "shell_exec",
    "git_ops",
    "web_fetch",
    "web_search",
    "self_eval",
)


def builtin_tools() -> list[Tool]:
    tools: list[Tool] = []
    for module_name in BUILTIN_MODULES:
        module = importlib.import_module(f"{__name__}.{module_name}")
        made = module.create()
        tools.extend(made if isinstance(made, list) else [made])
    return tools


def builtin_provider() -> StaticProvider:
    return StaticProvider(builtin_tools(), id="builtin", display_name="Built-in")


def default_registry() -> ToolRegistry:
    return ToolRegistry([builtin_provider()])
