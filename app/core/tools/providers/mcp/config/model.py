"""MCP server configuration: what one ``mcpServers`` entry is, and how it is written back.

Separate from the validation (``mcp.config.schema``) and the start-time expansion of
``${VAR}`` references (``mcp.config.expand``), which both work on these types: the data model
alone, so each of them can import it without importing the other.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "SECRET_PLACEHOLDER",
    "McpConfigError",
    "McpSandbox",
    "McpServerConfig",
    "ParsedConfig",
    "Transport",
    "dump_mcp_config",
    "dump_mcp_config_text",
]

# What the settings hold instead of a value kept in the OS keyring.
SECRET_PLACEHOLDER = "<stored in keyring>"

Transport = Literal["stdio", "http"]
# How a URL server is reached, when its entry says: Streamable HTTP or the legacy HTTP+SSE
# transport (None: detected at start, see ``mcp.url_transport``).
UrlType = Literal["http", "sse"]


class McpConfigError(ValueError):
    """The configuration cannot be used; ``errors`` lists every problem, each with its place."""

    def __init__(self, errors: Iterable[str]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


@dataclass(frozen=True)
class McpSandbox:
    """A stdio server's opt-in to the OS sandbox (``"sandbox": true`` or an object).

    Inside it the server can read the system (without the hidden sensitive paths), write only
    in its ``cwd``, ``write_folders`` and a private ``/tmp``, and reach the network only when
    ``network`` is on. ``write_folders`` are kept as written; ``~`` is expanded at start."""

    network: bool = False
    write_folders: tuple[str, ...] = ()

    def to_json(self) -> bool | dict[str, Any]:
        """``true`` for the defaults, else an object with the keys that differ."""
        if self == McpSandbox():
            return True
        entry: dict[str, Any] = {}
        if self.network:
            entry["network"] = True
        if self.write_folders:
            entry["write_folders"] = list(self.write_folders)
        return entry


@dataclass(frozen=True)
class McpServerConfig:
    """One server entry. ``name`` is the server id that permission rules are scoped to."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    url_type: UrlType | None = None
    timeout_s: float | None = None
    disabled: bool = False
    # stdio only: run the server in the OS sandbox (None: run it as any other program).
    sandbox: McpSandbox | None = None
    # Why this stored entry cannot run (a name saved before rules-compatible names were
    # required); the server is listed as failed with this message and never started.
    problem: str | None = None

    @property
    def transport(self) -> Transport:
        return "stdio" if self.command is not None else "http"

    def summary(self) -> str:
        """One line for lists: the command line or the URL."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return self.url or ""

    def to_json(self) -> dict[str, Any]:
        """The entry in Claude Desktop's shape (plus Tebiki's optional keys when set)."""
        entry: dict[str, Any] = {}
        if self.command is not None:
            entry["command"] = self.command
            entry["args"] = list(self.args)
            if self.env:
                entry["env"] = dict(self.env)
            if self.cwd:
                entry["cwd"] = self.cwd
            if self.sandbox is not None:
                entry["sandbox"] = self.sandbox.to_json()
        else:
            if self.url_type is not None:
                entry["type"] = self.url_type
            entry["url"] = self.url
            if self.headers:
                entry["headers"] = dict(self.headers)
        if self.timeout_s is not None:
            entry["timeout"] = self.timeout_s
        if self.disabled:
            entry["disabled"] = True
        return entry


@dataclass(frozen=True)
class ParsedConfig:
    servers: dict[str, McpServerConfig]
    warnings: list[str] = field(default_factory=list)


def dump_mcp_config(servers: Mapping[str, McpServerConfig]) -> dict[str, Any]:
    return {"mcpServers": {name: cfg.to_json() for name, cfg in servers.items()}}


def dump_mcp_config_text(servers: Mapping[str, McpServerConfig]) -> str:
    return json.dumps(dump_mcp_config(servers), indent=2, ensure_ascii=False)
