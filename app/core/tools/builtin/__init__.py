"""Built-in tools, one module each, found by looking at this package: nothing here lists them.

The convention (adding a tool is adding a module and its tests):

- A *tool module* is a public module of this package (name not starting with ``_``) that
  defines ``create() -> Tool | list[Tool]`` (a list for tools that share state, e.g.
  shell_exec + shell_jobs). Everything about the tool is in its ``ToolSpec``.
- A module without ``create`` is a helper shared by tool modules and is skipped; so is a private
  ``_module``.
- Tool modules are imported at start-up, so they must import their heavy libraries (an HTTP
  stack, HTML converters) inside functions and name them in a module-level
  ``WARMUP_IMPORTS: tuple[str, ...]``: the run warm-up (app.core.warmup) loads them in a worker
  thread before the first run needs them.

``app.core.tools.default_registry`` puts them in a registry.
"""

from __future__ import annotations

import functools
import importlib
import logging
import pkgutil
from collections.abc import Container, Iterable
from types import ModuleType

from app.core.tools.base import Tool

log = logging.getLogger(__name__)


def discover_tool_modules(package: str, path: Iterable[str],
                          skip: Container[str] = ()) -> tuple[ModuleType, ...]:
    """The tool modules of ``package`` (see the module docstring), sorted by name."""
    found = []
    for info in sorted(pkgutil.iter_modules(path), key=lambda m: m.name):
        full = f"{package}.{info.name}"
        if info.name.startswith("_") or info.ispkg or full in skip:
            continue
        module = importlib.import_module(full)
        if callable(getattr(module, "create", None)):
            found.append(module)
    return tuple(found)


@functools.cache
def tool_modules() -> tuple[ModuleType, ...]:
    """Every tool module of this package, imported once."""
    return discover_tool_modules(__name__, __path__)


def warmup_imports() -> tuple[str, ...]:
    """What the built-in tools need for a run that start-up does not import."""
    names: list[str] = []
    for module in tool_modules():
        names.extend(getattr(module, "WARMUP_IMPORTS", ()))
    return tuple(dict.fromkeys(names))


def builtin_tools() -> list[Tool]:
    tools: list[Tool] = []
    for module in tool_modules():
        made = module.create()
        tools.extend(made if isinstance(made, list) else [made])
    return tools
