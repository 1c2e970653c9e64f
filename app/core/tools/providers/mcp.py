"""MCP provider (priority 100): tools of Model Context Protocol servers as Tebiki tools.

Servers are configured in Claude Desktop's ``mcpServers`` shape (see ``mcp_config``); each runs
in an ``McpConnection`` (see ``mcp_connection`` for why every server has a task of its own).

**Tool names.** A server's tool ``create_issue`` on server ``github`` is offered as
``github__create_issue`` (Claude Code's convention without its ``mcp__`` head). Why a prefix and
not the raw name:

- enabled checkboxes and the history are keyed by tool name, so two servers' ``search`` tools
  (or a server's ``read_file`` and the built-in one) would share one checkbox;
- MCP's priority is the highest, so a raw ``read_file`` from a server would silently replace the
  built-in for the model;
- the model can tell which server it is calling.

Both parts are reduced to ``[A-Za-z0-9_-]`` (anything else becomes ``_``) so the name is valid for
the Anthropic API (``^[a-zA-Z0-9_-]{1,64}$``); a name longer than 64 characters keeps its head
and ends in ``_`` + 8 hex digits of a hash of the raw server and tool names; a name that still
collides (``a.b`` vs ``a_b``) gets ``_2``, ``_3``… in configuration order. The raw name is what
is sent to the server (``McpTool.remote_name``). Rules need no prefix knowledge to scope a
server: ``server_id`` is the server's name; a ``tool_pattern`` rule matches the full name
(``github__create_*``).

**Trust.** ``readOnlyHint`` only moves a tool to the read-only group and shows it as low risk;
annotations are copied to ``ToolSpec.annotations`` for display. No rule is ever created from
them, so with no matching rule every MCP call asks.

**Failures.** A server that fails to start offers no tools (they were never listed). A server
that dies after starting keeps its last listed tools in ``tools()``, so they stay visible under
their server and keep their checkboxes; a call then returns an error naming the failure and the
server's stderr tail, until ``restart()``. ``status(server)`` gives ``(state, stderr_tail)``.
The app never sees an exception from a server.

**Sandbox.** A stdio server is a program Tebiki starts, so its tools say ``runs_programs``;
they are ``sandboxed`` only when the server opted in (``"sandbox"`` in its config) and runs in
the app's OS sandbox (``McpProvider(sandbox=...)``, see ``mcp_connection``). HTTP servers start
no program here.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from app.core.sandbox import Sandbox, machine_sandbox
from app.core.tools.base import RiskLevel, ToolCategory, ToolContext, ToolResult, ToolSpec
from app.core.tools.providers.base import ProviderPriority
from app.core.tools.providers.mcp_config import McpServerConfig
from app.core.tools.providers.mcp_connection import McpConnection, ServerState, ServerStatus

log = logging.getLogger(__name__)

MAX_TOOL_NAME = 64
NAME_SEPARATOR = "__"
MAX_DESCRIPTION = 10_000
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_-]")
VALID_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

StatusListener = Callable[[str], None]


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
                  network: bool = False) -> ToolSpec:
    """A ToolSpec from a wire-format MCP tool (``inputSchema``, ``annotations``…).

    ``runs_programs``: the server is a program Tebiki started (stdio); ``sandboxed``: it runs
    in the OS sandbox, with the network when ``network``."""
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
        # readOnlyHint is the server's word, not a fact: every call is checkpointed.
        changes_files=True,
    )


class McpTool:
    """One server tool as a Tebiki ``Tool``; calls go through the provider's current
    connection for that server, so a restart never leaves a stale tool object behind."""

    def __init__(self, provider: McpProvider, server: str, remote_name: str,
                 spec: ToolSpec) -> None:
        self._provider = provider
        self.server = server
        self.remote_name = remote_name
        self.spec = spec

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return await self._provider.call(self.server, self.remote_name, input, ctx,
                                         label=self.spec.name)

    def __repr__(self) -> str:
        return f"McpTool({self.spec.name!r} → {self.server}:{self.remote_name})"


class McpProvider:
    """Manages N servers and offers their tools. Use it from the event loop's thread only.

    ``on_tools_changed()`` runs whenever the offered tools change (a server started, died and
    was restarted, was removed, or announced ``tools/list_changed``): wire it to
    ``ToolRegistry.refresh``. ``subscribe(listener)`` reports every status change by server
    name (for the Settings tab).
    """

    id = "mcp"
    display_name = "MCP servers"
    priority = int(ProviderPriority.MCP)

    def __init__(self, configs: Mapping[str, McpServerConfig] | Iterable[McpServerConfig] = (),
                 *, on_tools_changed: Callable[[], None] | None = None,
                 startup_timeout_s: float = 60.0, stop_timeout_s: float = 10.0,
                 sandbox: Sandbox | None = None) -> None:
        self.on_tools_changed = on_tools_changed
        self._sandbox = sandbox if sandbox is not None else machine_sandbox()
        self._startup_timeout_s = startup_timeout_s
        self._stop_timeout_s = stop_timeout_s
        self._connections: dict[str, McpConnection] = {}
        self._listeners: list[StatusListener] = []
        self._tools: list[McpTool] = []
        self._signature: tuple[Any, ...] = ()
        self._apply_lock = asyncio.Lock()
        values = configs.values() if isinstance(configs, Mapping) else configs
        for config in values:
            self._connections[config.name] = self._connect(config)
        self._rebuild_tools(notify=False)

    @property
    def sandbox(self) -> Sandbox:
        """The app's sandbox setting that servers opting in start under."""
        return self._sandbox

    @sandbox.setter
    def sandbox(self, sandbox: Sandbox) -> None:
        """A new setting (e.g. "Require the sandbox" switched): applies from each server's
        next start; running servers keep running as they were started."""
        self._sandbox = sandbox
        for conn in self._connections.values():
            conn.sandbox = sandbox

    # -- ToolProvider -----------------------------------------------------------------------

    def is_available(self) -> bool:
        return True

    def tools(self) -> Sequence[McpTool]:
        return list(self._tools)

    # -- queries ----------------------------------------------------------------------------

    def server_names(self) -> list[str]:
        return list(self._connections)

    def configs(self) -> dict[str, McpServerConfig]:
        return {name: conn.config for name, conn in self._connections.items()}

    def status(self, server: str) -> tuple[ServerState, str]:
        """``(state, stderr_tail)``; raises KeyError for a server that is not configured."""
        conn = self._connections[server]
        return conn.state, conn.stderr_tail()

    def server_status(self, server: str) -> ServerStatus:
        return self._connections[server].status()

    def statuses(self) -> list[ServerStatus]:
        return [conn.status() for conn in self._connections.values()]

    def tool_available(self, tool_name: str) -> bool:
        """Whether the tool's server is running now (a dead server's tools stay listed)."""
        for tool in self._tools:
            if tool.spec.name == tool_name:
                conn = self._connections.get(tool.server)
                return conn is not None and conn.running
        return False

    def subscribe(self, listener: StatusListener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Start every enabled server that is not running; returns when each runs or failed."""
        await asyncio.gather(*(conn.start() for conn in list(self._connections.values())
                               if conn.state not in ("running", "starting")))

    async def restart(self, server: str) -> None:
        """Stop (if needed) and start one server; KeyError when it is not configured."""
        await self._connections[server].restart()

    async def stop_server(self, server: str) -> None:
        await self._connections[server].stop()

    async def apply_config(self, configs: Mapping[str, McpServerConfig]) -> None:
        """Make the running servers match ``configs``: stop removed and changed servers, start
        new and changed ones; untouched servers keep running. Returns once the new servers run
        or have failed.

        Only the changes hold the lock, never the wait for a start: a server that never
        answers ``initialize`` must not hold up the next call (which stops or replaces it at
        once, cancelling that startup)."""
        async with self._apply_lock:
            old = self._connections
            gone = [conn for name, conn in old.items()
                    if name not in configs or conn.config != configs[name]]
            await asyncio.gather(*(conn.stop() for conn in gone))
            fresh: dict[str, McpConnection] = {}
            to_start: list[McpConnection] = []
            for name, config in configs.items():
                conn = old.get(name)
                if conn is None or conn.config != config:
                    conn = self._connect(config)
                    to_start.append(conn)
                fresh[name] = conn
            self._connections = fresh
            self._rebuild_tools()
            for name in set(old) - set(fresh):
                self._emit(name)
            # Started while holding the lock, so a later call sees (and can stop) each task.
            starting = [conn.begin() for conn in to_start]
        if starting:
            await asyncio.shield(asyncio.gather(*starting))

    async def aclose(self) -> None:
        """Stop every server; their processes are gone (and reaped) when this returns."""
        await asyncio.gather(*(conn.stop() for conn in list(self._connections.values())),
                             return_exceptions=True)

    # -- calls ------------------------------------------------------------------------------

    async def call(self, server: str, remote_name: str, tool_input: Mapping[str, Any],
                   ctx: ToolContext, *, label: str | None = None) -> ToolResult:
        """Call ``remote_name`` on ``server``. Timeout: the server's ``"timeout"`` when set,
        else the tool's configured ``shell_timeout_s`` (default 30 s)."""
        conn = self._connections.get(server)
        if conn is None:
            return ToolResult.error(f"MCP server {server!r} is no longer configured, so "
                                    f"{label or remote_name} cannot run. Use another tool.")
        timeout = conn.config.timeout_s or ctx.shell_timeout_s
        return await conn.call_tool(remote_name, tool_input, timeout_s=timeout,
                                    max_output_chars=ctx.max_output_bytes, label=label)

    # -- internals --------------------------------------------------------------------------

    def _connect(self, config: McpServerConfig) -> McpConnection:
        return McpConnection(config, on_change=self._changed,
                             startup_timeout_s=self._startup_timeout_s,
                             stop_timeout_s=self._stop_timeout_s, sandbox=self._sandbox)

    def _changed(self, conn: McpConnection) -> None:
        if self._connections.get(conn.name) is not conn:
            return  # a connection being replaced by apply_config
        self._rebuild_tools()
        self._emit(conn.name)

    def _emit(self, server: str) -> None:
        for listener in list(self._listeners):
            try:
                listener(server)
            except Exception:
                log.exception("MCP status listener failed")

    def _rebuild_tools(self, notify: bool = True) -> None:
        pairs = [(conn, tool) for conn in self._connections.values() for tool in conn.tools]
        names = assign_tool_names((conn.name, str(tool["name"])) for conn, tool in pairs)
        tools: list[McpTool] = []
        for conn, tool in pairs:
            server, remote = conn.name, str(tool["name"])
            name = names[(server, remote)]
            if any(t.spec.name == name for t in tools):
                continue  # a server listing one name twice
            sandbox = conn.config.sandbox
            spec = spec_for_tool(server, name, tool,
                                 runs_programs=conn.config.transport == "stdio",
                                 sandboxed=conn.sandboxed,
                                 network=sandbox is not None and sandbox.network)
            tools.append(McpTool(self, server, remote, spec))
        # The flags are compare=False on ToolSpec, so they join the signature on their own.
        signature = tuple((t.spec, tuple(sorted(t.spec.annotations.items(), key=str)),
                           t.spec.runs_programs, t.spec.sandboxed) for t in tools)
        self._tools = tools
        if signature != self._signature:
            self._signature = signature
            if notify and self.on_tools_changed is not None:
                try:
                    self.on_tools_changed()
                except Exception:
                    log.exception("MCP tools-changed callback failed")
