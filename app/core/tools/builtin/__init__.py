"""Built-in tools, one module each. ``default_registry()`` holds all of them.

The web tools are registered by spec and imported on first use (``LazyTool``): their libraries
would otherwise be a large part of start-up time and idle memory.
"""

from __future__ import annotations

import importlib
import logging

from app.core.tools.base import Tool
from app.core.tools.builtin.web_specs import WEB_FETCH_SPEC, WEB_SEARCH_SPEC
from app.core.tools.lazy import LazyTool
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
    "self_eval",
)
# (spec, module): imported when the tool first runs, or by the run warm-up (app.core.warmup).
LAZY_BUILTINS = (
    (WEB_FETCH_SPEC, f"{__name__}.web_fetch"),
    (WEB_SEARCH_SPEC, f"{__name__}.web_search"),
)


def builtin_tools() -> list[Tool]:
    tools: list[Tool] = []
    for module_name in BUILTIN_MODULES:
        module = importlib.import_module(f"{__name__}.{module_name}")
        made = module.create()
        tools.extend(made if isinstance(made, list) else [made])
    tools.extend(LazyTool(spec, module) for spec, module in LAZY_BUILTINS)
    return tools


def builtin_provider() -> StaticProvider:
    return StaticProvider(builtin_tools(), id="builtin", display_name="Built-in")


def default_registry() -> ToolRegistry:
    return ToolRegistry([builtin_provider()])
