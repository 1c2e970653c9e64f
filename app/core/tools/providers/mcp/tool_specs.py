"""MCP server tools as Tebiki tools: their names (``server__tool``, valid for the model APIs
and unique), their ``ToolSpec`` and the ``McpTool`` that calls through the provider's
``McpToolCalls``. See ``mcp`` for why tools are named this way, and
``app.core.permissions.server_claims`` for how far annotations are trusted."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from app.core.tools.base import RiskLevel, ToolCategory, ToolContext, ToolResult, ToolSpec

MAX_TOOL_NAME = 64
NAME_SEPARATOR = "__"
MAX_DESCRIPTION = 10_000
MAX_PATH_CHARS = 4096  # longer is no path a server opens
MAX_NAMED_PATHS = 50
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_-]")
VALID_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _clean(part: str) -> str:
    return _INVALID_CHARS.sub("_", part) or "_"


def qualified_tool_name(server: str, tool: str) -> str:
    """``server__tool``, valid for the Anthropic API and at most 64 characters."""
    name = f"{_clean(server)}{NAME_SEPARATOR}{_clean(tool)}"
    if len(name) > MAX_TOOL_NAME:
        digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()[:8]
        name = f"{name[:MAX_TOOL_NAME - 9]}_{digest}"
    return name


def assign_tool_names(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Unique names for (server, tool) pairs; earlier pairs keep the plain name."""
    taken: set[str] = set()
    names: dict[tuple[str, str], str] = {}
    for pair in pairs:
        if pair in names:
            continue
        base = qualified_tool_name(*pair)
        name, n = base, 1
        while name.lower() in taken:
            n += 1
            suffix = f"_{n}"
            name = base[:MAX_TOOL_NAME - len(suffix)] + suffix
        taken.add(name.lower())
        names[pair] = name
    return names


def _input_schema(raw: Any) -> dict[str, Any]:
    """The server's schema, made acceptable as an Anthropic ``input_schema`` (an object)."""
    schema = dict(raw) if isinstance(raw, Mapping) else {}
    schema.setdefault("type", "object")
    if schema.get("type") != "object":
        return {"type": "object", "properties": {}}
    return schema


def spec_for_tool(server: str, name: str, tool: Mapping[str, Any], *,
                  runs_programs: bool = False, sandboxed: bool = False,
                  network: bool = False, write_folders: tuple[str, ...] = ()) -> ToolSpec:
    """A ToolSpec from a wire-format MCP tool (``inputSchema``, ``annotations``…).

    ``runs_programs``: the server is a program Tebiki started (stdio); ``sandboxed``: it runs
    in the OS sandbox, with the network when ``network``, writing only to ``write_folders``
    (its private /tmp aside)."""
    annotations = tool.get("annotations")
    annotations = dict(annotations) if isinstance(annotations, Mapping) else {}
    read_only = annotations.get("readOnlyHint") is True
    description = tool.get("description") or tool.get("title") or annotations.get("title") or \
        f"Tool {tool.get('name')!r} of MCP server {server!r}."
    return ToolSpec(
        name=name,
        description=str(description)[:MAX_DESCRIPTION],
        input_schema=_input_schema(tool.get("inputSchema")),
        category=ToolCategory.READ_ONLY if read_only else ToolCategory.COMPOSITE,
        # Shown, never trusted: risk only changes the badge; no rule follows from it.
        risk=RiskLevel.LOW if read_only else RiskLevel.HIGH,
        server_id=server,
        annotations=annotations,
        runs_programs=runs_programs,
        sandboxed=sandboxed,
        needs_network=sandboxed and network,
        sandbox_write_folders=write_folders if sandboxed else None,
        # readOnlyHint is the server's word, not a fact: every call is checkpointed.
        changes_files=True,
        # Outside its sandbox a server reads whatever its input names; inside, it sees only
        # what the sandbox shows it (secrets hidden), like any program.
        named_paths=None if sandboxed else named_paths,
    )


def named_paths(tool_input: Mapping[str, Any], project_root: Path | None = None) -> list[str]:
    """The files a call names in its arguments (``/abs``, ``~/x``, ``file://`` URIs, and
    relative paths from the project folder), resolved: what a filesystem server reads is
    what its input says, so a ``.env`` it is handed is a sensitive read like read_file's
    (the guard asks, the result labels the conversation), wherever it lies."""
    base = project_root if project_root is not None else Path.cwd()
    out: list[str] = []
    for text in _strings(tool_input, 0):
        value = text.strip()
        if value.startswith("file://"):
            value = unquote(urlsplit(value).path)
        elif "://" in value or not value or any(c.isspace() for c in value) or \
                len(value) > MAX_PATH_CHARS or ("/" not in value and not value.startswith(".")):
            continue
        try:
            out.append(os.path.realpath(base / os.path.expanduser(value)))
        except (OSError, ValueError):
            continue
    return list(dict.fromkeys(out))[:MAX_NAMED_PATHS]


def _strings(value: Any, depth: int) -> list[str]:
    if isinstance(value, str):
        return [value]
    if depth > 8:
        return []
    if isinstance(value, Mapping):
        return [s for item in value.values() for s in _strings(item, depth + 1)]
    if isinstance(value, (list, tuple)):
        return [s for item in value[:100] for s in _strings(item, depth + 1)]
    return []


class McpToolCalls(Protocol):
    """Calls a server's tool by server name, on its current connection
    (``McpReconnectingCalls``)."""

    async def call(self, server: str, remote_name: str, tool_input: Mapping[str, Any],
                   ctx: ToolContext, *, label: str | None = None) -> ToolResult: ...


class McpTool:
    """One server tool as a Tebiki ``Tool``; calls go through the server's current connection,
    so a restart never leaves a stale tool object behind."""

    def __init__(self, calls: McpToolCalls, server: str, remote_name: str,
                 spec: ToolSpec) -> None:
        self._calls = calls
        self.server = server
        self.remote_name = remote_name
        self.spec = spec

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return await self._calls.call(self.server, self.remote_name, input, ctx,
                                      label=self.spec.name)

    def __repr__(self) -> str:
        return f"McpTool({self.spec.name!r} → {self.server}:{self.remote_name})"
