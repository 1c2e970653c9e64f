"""MCP provider (priority 100): tools of Model Context Protocol servers as Tebiki tools.

Servers are configured in Claude Desktop's ``mcpServers`` shape (see ``mcp.config``); each runs
in an ``McpConnection`` (see ``mcp.server_task`` for why every server has a task of its own).

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

**Trust.** Annotations are copied to ``ToolSpec.annotations``; ``readOnlyHint`` moves a tool
to the read-only group and shows it as low risk. No rule is ever created from them; the
permission facts weigh them as claims (``app.core.permissions.server_claims``): a read-only
claim counts only for a server running in the sandbox without network and write folders
(``ToolSpec.sandbox_write_folders``, from the launch).

**Failures.** A server that fails to start offers no tools (they were never listed). A server
that dies after starting keeps its last listed tools in ``tools()``, so they stay visible under
their server and keep their checkboxes; a call then returns an error naming the failure and the
server's stderr tail; a stdio server is restarted at the next call, after a backoff
(``mcp.crash_restart``). ``status(server)`` gives ``(state, stderr_tail)``.
The app never sees an exception from a server.

**Roots, instructions, resources.** Every session answers ``roots/list`` with the open project
folder (``set_roots``; servers are told when it changes) and stdio servers start there unless
their config sets ``cwd``; when the project changes, those servers are restarted in the new
folder once their calls in flight have finished (``mcp.project_follow``). A server's
``instructions`` are kept while it runs (``instructions()``, for the system prompt). Servers
offering resources get a ``<server>__read_resource`` tool so resource links in results can be
followed (re-checked at ``resources/list_changed``, so a first resource added later counts);
resources and prompts are also reachable directly (``list_resources`` …
``get_prompt``, see ``mcp.resource_queries``).

**Logs.** Each server's ``notifications/message`` are kept (the last 500, ``server_log``)
and it is asked for its messages from a level on (default "warning", ``logging/setLevel``
when it declares logging).

**Reconnecting.** An idle HTTP server is pinged, so one that died is marked failed ("lost").
A call to a lost server, or one that surely did not reach it, restarts the connection once
(see ``mcp.reconnecting_call``).

**Sandbox.** A stdio server is a program Tebiki starts, so its tools say ``runs_programs``;
they are ``sandboxed`` only when the server opted in (``"sandbox"`` in its config) and runs in
the app's OS sandbox (``McpProvider(sandbox=...)``, see ``mcp.server_task``). HTTP servers start
no program here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from app.core.sandbox import Sandbox, machine_sandbox
from app.core.tools.base import ToolContext, ToolResult
from app.core.tools.providers.base import ProviderPriority
from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.connection import McpConnection
from app.core.tools.providers.mcp.oauth.errors import SignInError
from app.core.tools.providers.mcp.oauth.sign_in import McpOAuth
from app.core.tools.providers.mcp.reconnecting_call import McpReconnectingCalls
from app.core.tools.providers.mcp.resource_queries import McpResourceQueries
from app.core.tools.providers.mcp.resources import McpResourceTool
from app.core.tools.providers.mcp.roots import McpRoots
from app.core.tools.providers.mcp.server_log import ServerLog
from app.core.tools.providers.mcp.server_requests import ServerRequestHandler
from app.core.tools.providers.mcp.server_status import ServerState, ServerStatus
from app.core.tools.providers.mcp.tool_list import build_tool_list, tool_list_signature
from app.core.tools.providers.mcp.tool_specs import McpTool

log = logging.getLogger(__name__)

StatusListener = Callable[[str], None]


def server_instructions(providers: Iterable[object],
                        tool_names: Iterable[str]) -> dict[str, str]:
    """The instructions of the MCP servers whose tools are among ``tool_names``, from the
    registry's providers (``registry.providers()``); {} without an MCP provider."""
    names = list(tool_names)
    found: dict[str, str] = {}
    for provider in providers:
        if isinstance(provider, McpProvider):
            found.update(provider.instructions(names))
    return found


class McpProvider:
    """Manages N servers and offers their tools. Use it from the event loop's thread only.

    ``on_tools_changed()`` runs whenever the offered tools change (a server started, died and
    was restarted, was removed, or announced ``tools/list_changed``): wire it to
    ``ToolRegistry.refresh``. ``subscribe(listener)`` reports every status change by server
    name (for the Settings tab). Resources and prompts are asked through an
    ``McpResourceQueries``, calls made through an ``McpReconnectingCalls``: both find each
    server's current connection by name here.
    """

    id = "mcp"
    display_name = "MCP servers"
    priority = int(ProviderPriority.MCP)
    # OAuth sign-in for HTTP servers (set through ``oauth``); None: requests carry no auth.
    _oauth: McpOAuth | None = None

    def __init__(self, configs: Mapping[str, McpServerConfig] | Iterable[McpServerConfig] = (),
                 *, on_tools_changed: Callable[[], None] | None = None,
                 startup_timeout_s: float = 60.0, stop_timeout_s: float = 10.0,
                 sandbox: Sandbox | None = None, roots: Iterable[Path] = (),
                 keepalive_s: float = 30.0, request_timeout_s: float = 30.0) -> None:
        self.on_tools_changed = on_tools_changed
        self._roots = McpRoots(roots)
        self._keepalive_s = keepalive_s
        self._sandbox = sandbox if sandbox is not None else machine_sandbox()
        self._startup_timeout_s = startup_timeout_s
        self._stop_timeout_s = stop_timeout_s
        self._connections: dict[str, McpConnection] = {}
        # Each server's log (messages and level), kept when its configuration changes.
        self._logs: dict[str, ServerLog] = {}
        self._listeners: list[StatusListener] = []
        self._tools: list[McpTool | McpResourceTool] = []
        self._signature: tuple[Any, ...] = ()
        self._apply_lock = asyncio.Lock()
        # Answers servers' sampling and elicitation requests (through the person); None:
        # servers are told Tebiki supports neither.
        self._server_requests: ServerRequestHandler | None = None
        self._calls = McpReconnectingCalls(self._connection)
        self.queries = McpResourceQueries(self._connection, request_timeout_s)  # + completion
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

    @property
    def oauth(self) -> McpOAuth | None:
        return self._oauth

    @oauth.setter
    def oauth(self, oauth: McpOAuth | None) -> None:
        """Sign-in for HTTP servers; applies from each server's next start."""
        self._oauth = oauth
        for conn in self._connections.values():
            conn.oauth = oauth
        if oauth is not None:
            oauth.subscribe(lambda server: self._emit(server)
                            if server in self._connections else None)

    @property
    def server_requests(self) -> ServerRequestHandler | None:
        return self._server_requests

    @server_requests.setter
    def server_requests(self, handler: ServerRequestHandler | None) -> None:
        """Set how servers' sampling and elicitation requests are answered. Servers started
        from now on advertise both; running ones keep what they were told at their start (a
        handler removed later answers "not available")."""
        self._server_requests = handler

    def _server_request_handler(self) -> ServerRequestHandler | None:
        return self._server_requests  # read at each request: a later setter applies

    # -- ToolProvider -----------------------------------------------------------------------

    def is_available(self) -> bool:
        return True

    def tools(self) -> Sequence[McpTool | McpResourceTool]:
        return list(self._tools)

    # -- roots and instructions -------------------------------------------------------------

    def set_roots(self, folders: Iterable[Path]) -> None:
        """The open project folder(s): answered to ``roots/list`` from now on; running servers
        are told the list changed; stdio servers without a configured ``cwd`` start in the
        first one, and running ones are restarted there (after their calls in flight)."""
        self._roots.set(folders)

    def roots(self) -> list[Path]:
        return self._roots.folders

    def instructions(self, tool_names: Iterable[str] | None = None) -> dict[str, str]:
        """``{server: instructions}`` for the system prompt (untrusted text: the prompt fences
        and labels it), of the servers whose tools are listed — and, given ``tool_names``
        (the tools a run offers), only of servers with at least one of them offered."""
        servers = None if tool_names is None else \
            {t.server for t in self._tools if t.spec.name in set(tool_names)}
        return {name: conn.instructions for name, conn in self._connections.items()
                if conn.instructions and conn.tools and (servers is None or name in servers)}

    # -- calls, resources and prompts -------------------------------------------------------

    async def call(self, server: str, remote_name: str, tool_input: Mapping[str, Any],
                   ctx: ToolContext, *, label: str | None = None) -> ToolResult:
        """Call a server's tool, reconnecting a lost server first (see ``mcp.reconnecting_call``
        for the rules; the offered tools call through the same path)."""
        return await self._calls.call(server, remote_name, tool_input, ctx, label=label)

    async def list_resources(self, server: str) -> list[dict[str, Any]]:
        """The server's resources; [] when it offers none. This and the four below raise
        McpRequestError when the server cannot answer (see ``mcp.resource_queries``)."""
        return await self.queries.list_resources(server)

    async def list_resource_templates(self, server: str) -> list[dict[str, Any]]:
        return await self.queries.list_resource_templates(server)

    async def read_resource(self, server: str, uri: str, *,
                            timeout_s: float | None = None) -> list[dict[str, Any]]:
        return await self.queries.read_resource(server, uri, timeout_s=timeout_s)

    async def list_prompts(self, server: str) -> list[dict[str, Any]]:
        return await self.queries.list_prompts(server)

    async def get_prompt(self, server: str, name: str,
                         arguments: Mapping[str, str] | None = None) -> dict[str, Any]:
        return await self.queries.get_prompt(server, name, arguments)

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

    def server_log(self, server: str) -> ServerLog:
        """The server's last log messages and its log level (``set_level`` applies at once
        to a running server and to later starts); KeyError when it is not configured."""
        return self._connections[server].log

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

    async def sign_in(self, server: str) -> str:
        """Sign in to an HTTP server in the browser, then restart it; returns a message for
        the person. Raises SignInError when the sign-in did not complete (KeyError when the
        server is not configured)."""
        conn = self._connections[server]
        if self._oauth is None:
            raise SignInError("Signing in to MCP servers is not available here.")
        message = await self._oauth.sign_in(conn.config)
        current = self._connections.get(server)
        if current is not None:
            await current.restart()
        return message

    async def sign_out(self, server: str) -> None:
        """Forget the server's sign-in, then restart it (it ends at "needs sign-in" when it
        requires one)."""
        conn = self._connections[server]
        if self._oauth is not None:
            await self._oauth.sign_out(server)
        if conn.state not in ("stopped", "disabled"):
            await conn.restart()

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
                self._logs.pop(name, None)
                self._emit(name)
            # Started while holding the lock, so a later call sees (and can stop) each task.
            starting = [conn.begin() for conn in to_start]
        if starting:
            await asyncio.shield(asyncio.gather(*starting))

    async def aclose(self) -> None:
        """Stop every server; their processes are gone (and reaped) when this returns."""
        await asyncio.gather(*(conn.stop() for conn in list(self._connections.values())),
                             return_exceptions=True)

    # -- internals --------------------------------------------------------------------------

    def _connection(self, server: str) -> McpConnection | None:
        return self._connections.get(server)  # read each time: apply_config replaces the dict

    def _connect(self, config: McpServerConfig) -> McpConnection:
        name = config.name
        if name not in self._logs:  # a listener naming the server: emitted on each message
            self._logs[name] = ServerLog(on_entry=lambda: self._emit(name))
        conn = McpConnection(config, on_change=self._changed,
                             startup_timeout_s=self._startup_timeout_s,
                             stop_timeout_s=self._stop_timeout_s, sandbox=self._sandbox,
                             roots=self._roots, keepalive_s=self._keepalive_s,
                             server_log=self._logs[name])
        conn.server_requests = self._server_request_handler
        conn.oauth = self._oauth
        return conn

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
        tools = build_tool_list(self._connections.values(), calls=self._calls,
                                reader=self.queries)
        signature = tool_list_signature(tools)
        self._tools = tools
        if signature != self._signature:
            self._signature = signature
            if notify and self.on_tools_changed is not None:
                try:
                    self.on_tools_changed()
                except Exception:
                    log.exception("MCP tools-changed callback failed")
