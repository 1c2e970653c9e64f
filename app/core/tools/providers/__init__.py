"""Tool providers: where tools come from (builtin, cli, custom TOML, MCP)."""

from app.core.tools.providers.base import ProviderPriority, StaticProvider, ToolProvider

__all__ = ["ProviderPriority", "StaticProvider", "ToolProvider"]
