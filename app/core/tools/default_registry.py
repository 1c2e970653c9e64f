"""The tool registry the app starts from: the built-in tools, as one provider.

Here and not in app.core.tools.builtin: that package is the built-in tools' plug-in folder (a
module each, found by looking); putting tools and providers together is done outside it.
"""

from __future__ import annotations

from app.core.tools.builtin import builtin_tools
from app.core.tools.providers.base import StaticProvider
from app.core.tools.registry import ToolRegistry


def builtin_provider() -> StaticProvider:
    return StaticProvider(builtin_tools(), id="builtin", display_name="Built-in")


def default_registry() -> ToolRegistry:
    return ToolRegistry([builtin_provider()])
