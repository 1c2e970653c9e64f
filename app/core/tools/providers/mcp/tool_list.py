"""The tools the MCP provider offers, built from its servers' current listings: one Tebiki tool
per server tool (named and described by ``mcp.tool_specs``) and ``<server>__read_resource`` for
each server offering resources.

Separate from ``mcp`` (which runs the servers) because this is a pure function of the
connections' state: the provider rebuilds the list on every status change and compares
``tool_list_signature`` to know whether the registry must refresh.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from app.core.tools.providers.mcp.resources import (
    READ_RESOURCE,
    McpResourceTool,
    ResourceReader,
    read_resource_spec,
)
from app.core.tools.providers.mcp.tool_specs import (
    MAX_TOOL_NAME,
    McpTool,
    McpToolCalls,
    assign_tool_names,
    qualified_tool_name,
    spec_for_tool,
)

if TYPE_CHECKING:
    from app.core.tools.providers.mcp.connection import McpConnection


def build_tool_list(connections: Iterable[McpConnection], *, calls: McpToolCalls,
                    reader: ResourceReader) -> list[McpTool | McpResourceTool]:
    """The servers' tools in configuration order, then their ``read_resource`` tools; the
    tools call through ``calls``, the ``read_resource`` tools read through ``reader``."""
    conns = list(connections)
    pairs = [(conn, tool) for conn in conns for tool in conn.tools]
    names = assign_tool_names((conn.name, str(tool["name"])) for conn, tool in pairs)
    tools: list[McpTool | McpResourceTool] = []
    for conn, tool in pairs:
        server, remote = conn.name, str(tool["name"])
        name = names[(server, remote)]
        if any(t.spec.name == name for t in tools):
            continue  # a server listing one name twice
        spec = spec_for_tool(server, name, tool, **_server_facts(conn))
        tools.append(McpTool(calls, server, remote, spec))
    tools += _resource_tools(reader, conns, {t.spec.name.lower() for t in tools})
    return tools


def tool_list_signature(tools: Iterable[McpTool | McpResourceTool]) -> tuple[Any, ...]:
    """What must differ for the offered tools to have changed."""
    # The flags are compare=False on ToolSpec, so they join the signature on their own.
    return tuple((t.spec, tuple(sorted(t.spec.annotations.items(), key=str)),
                  t.spec.runs_programs, t.spec.sandboxed, t.spec.needs_network,
                  t.spec.sandbox_write_folders) for t in tools)


def _server_facts(conn: McpConnection) -> dict[str, Any]:
    """What Tebiki knows of how ``conn``'s server runs, for its tools' specs: a program it
    started (stdio), in the OS sandbox, with the network, and the folders it may write (the
    sandbox's own list from the launch, not the configuration's)."""
    launch = conn.launch
    confinement = launch.confinement if launch is not None and conn.sandboxed else None
    return {"runs_programs": conn.config.transport == "stdio",
            "sandboxed": confinement is not None,
            "network": confinement is not None and confinement.policy.network,
            "write_folders": () if confinement is None else
            tuple(str(p) for p in confinement.policy.writable)}


def _resource_tools(reader: ResourceReader, connections: Iterable[McpConnection],
                    taken: set[str]) -> list[McpResourceTool]:
    """``<server>__read_resource`` for each server offering resources whose tools are
    listed; after the servers' own tools, so a server tool of that name keeps it."""
    found: list[McpResourceTool] = []
    for conn in connections:
        if not (conn.tools and conn.has_resources):
            continue
        base = name = qualified_tool_name(conn.name, READ_RESOURCE)
        n = 1
        while name.lower() in taken:
            n += 1
            name = base[:MAX_TOOL_NAME - len(f"_{n}")] + f"_{n}"
        taken.add(name.lower())
        spec = read_resource_spec(conn.name, name, **_server_facts(conn))
        found.append(McpResourceTool(reader, conn.name, spec))
    return found
