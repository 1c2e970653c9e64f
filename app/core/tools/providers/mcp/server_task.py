"""The MCP server's own task: it opens the transport, negotiates the revision
(``mcp.revision``), then keeps the session (re-listing tools, telling the server the roots
changed, pinging an idle HTTP server) until the server is stopped or its transport ends.
Why one long-lived task per server: the SDK's transports (``stdio_client``,
``streamable_http_client``) and ClientSession are anyio context managers holding task groups
and cancel scopes, which must be entered and exited by the *same* task. ``serve`` enters them,
initializes, lists tools, then parks until it is asked to stop or the transport ends; leaving
the ``async with`` block is what closes the session and stops the process (stdin closed, then
SIGTERM/SIGKILL to the server's process group, inside the SDK's shielded shutdown), so nothing
is left behind whatever way the task ends.

Death is noticed without polling: the session reads through ``WatchedReadStream``, which
reports the end of the server's output (process exit, closed pipe, dropped HTTP session).
The server's stderr goes to a pipe drained by a small thread into a bounded buffer, so a
chatty server can never block on a full pipe, and the last lines explain a failure.

A stdio server whose config has ``"sandbox"`` starts inside the OS sandbox (see
``mcp.transport.stdio_launch``): when it cannot run here, the server does not start if the
sandbox is required, and starts "not sandboxed: …" (its status says) otherwise.

Separate from ``mcp.connection``, which drives start, stop, reconnect and status from outside
the task and makes a ``ServerRun`` for each start; the run reports its state changes through
the callbacks it was built with, never by knowing the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections import deque
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import anyio

from app.core.sandbox import Sandbox
from app.core.tools.providers.mcp import connection_texts as texts
from app.core.tools.providers.mcp.change_listener import listen_for_changes
from app.core.tools.providers.mcp.config.expand import expand_server_config
from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.oauth.sign_in import McpOAuth, auth_refusal
from app.core.tools.providers.mcp.results import describe_exception, leaf_exception
from app.core.tools.providers.mcp.revision import negotiate, still_answering
from app.core.tools.providers.mcp.roots import McpRoots
from app.core.tools.providers.mcp.server_log import ServerLog
from app.core.tools.providers.mcp.server_requests import HandlerSource, server_request_callbacks
from app.core.tools.providers.mcp.server_status import ServerState
from app.core.tools.providers.mcp.session_info import (
    http_status_text,
    list_all_tools,
    offered_tools,
    offers_resources,
    resources_now,
    server_capabilities,
)
from app.core.tools.providers.mcp.stdout_noise import UnreadableLines, is_unreadable_line
from app.core.tools.providers.mcp.transport import (
    StderrTail,
    StdioLaunch,
    WatchedReadStream,
    client_version,
    load_sdk,
    stdio_launch,
)
from app.core.tools.providers.mcp.url_transport import may_be_legacy_sse, open_url_transport

log = logging.getLogger(__name__)

CLIENT_NAME = "tebiki"


# Who is told of a run's state changes (``McpConnection``): (state, message).
StateReport = Callable[[ServerState, str], None]


class ServerRun:
    """One run of a server: the body of its task (``serve``), its transport and session, and
    what the server said (tools, instructions, capabilities). A fresh one for every start, so
    nothing of an earlier run leaks into the next; the connection keeps the last one, whose
    tools stay listed and whose stderr explains a failure after the task has ended."""

    def __init__(self, config: McpServerConfig, *, roots: McpRoots, sandbox: Sandbox,
                 oauth: McpOAuth | None, server_requests: HandlerSource,
                 keepalive_s: float, startup_timeout_s: float,
                 state: Callable[[], ServerState], report: StateReport,
                 project_changed: Callable[[], None], server_log: ServerLog,
                 resource_updated: Callable[[Any], None] = lambda uri: None) -> None:
        self.config, self._resource_updated = config, resource_updated
        # The server's log messages and level, kept by the connection across runs.
        self.log = server_log
        self.roots = roots  # answered to roots/list; stdio servers start in the first one
        self.sandbox = sandbox  # the app's sandbox setting when the run began
        self.oauth = oauth  # None: no auth on HTTP requests
        self.server_requests = server_requests  # who answers sampling / elicitation
        # How often an idle HTTP server is pinged, so one that died is not shown "running".
        self._keepalive_s = keepalive_s
        self._startup_timeout_s = startup_timeout_s
        # The connection's state (a call meeting a 401 changes it too) and how to change it.
        self._state = state
        self._report = report
        # The open project may no longer be the folder this run started in: a stdio server
        # that follows the project restarts there (``mcp.project_follow``).
        self._project_changed = project_changed
        # From the handshake (initialize, or server/discover on 2026-07-28): the server's
        # instructions and capabilities (wire dict).
        self.instructions = ""
        self.capabilities: dict[str, Any] = {}
        self.has_resources = False  # it lists resources: the model gets read_resource
        # Wire-format dicts (camelCase keys) of the last listing, and how many were left out.
        self.tools: list[dict[str, Any]] = []
        self.hidden_tools = 0
        self.needs_auth = False
        # Set when a running HTTP server stopped answering: the next call reconnects.
        self.lost = False
        # How this run was started; None for HTTP servers and until a stdio server starts.
        self.launch: StdioLaunch | None = None
        # Reached over legacy HTTP+SSE (configured, or detected: see ``mcp.url_transport``).
        self.legacy_sse = config.url_type == "sse"
        self._first_failure = ""
        self.session: Any = None  # the live client session while the run is inside it
        self.stopping = False  # a stop (or restart) of this run has begun
        self.ended = False  # the transport has ended (process exit, closed connection)
        # When (time.monotonic) it began running and its transport ended: a crash's backoff.
        self.running_since: float | None = None
        self.ended_at: float | None = None
        self._wake = asyncio.Event()
        self._relist = False
        self._relist_resources = False  # whether it has resources may have changed
        self._roots_changed = False
        self._http_status = 0  # the last HTTP status seen (for the startup failure)
        self._stderr: StderrTail | None = None
        self._events: deque[str] = deque(maxlen=20)  # the "tail" of HTTP servers
        # Stdout lines of this run that were not JSON-RPC (see mcp.stdout_noise).
        self._unreadable = UnreadableLines(config.name, self._events)

    @property
    def name(self) -> str:
        return self.config.name

    def request_stop(self) -> None:
        """Let ``serve`` leave its session (it returns once the transport is closed)."""
        self.stopping = True
        self._wake.set()

    def stderr_tail(self) -> str:
        if self._stderr is not None:
            return self._stderr.text()
        return "\n".join(self._events)

    @property
    def crashed(self) -> bool:
        """A stdio server that ran, then exited without being stopped."""
        return (self.config.transport == "stdio" and self.running_since is not None
                and self.ended and not self.stopping)

    def _transport_ended(self) -> None:
        self.ended = True
        self.ended_at = time.monotonic()
        self._wake.set()
        if not self.stopping and self._state() == "running":
            self.lost = self.config.transport != "stdio"
            what = "exited" if self.config.transport == "stdio" else "closed the connection"
            self._report("failed", f"the server {what} unexpectedly; Tebiki restarts it at "
                                   "the next call")

    async def _on_message(self, message: Any) -> None:
        item = getattr(message, "root", message)  # mcp 1.x wraps notifications in a RootModel
        if isinstance(item, Exception):
            if is_unreadable_line(item):
                self._unreadable.note(item)
            else:
                log.debug("MCP server %s: transport error: %s", self.name,
                          describe_exception(item))
                self._events.append(f"transport error: {describe_exception(item)}")
            return
        method = getattr(item, "method", None)
        if method == "notifications/tools/list_changed":
            self._tools_changed()
        elif method == "notifications/resources/list_changed":
            self._resources_changed()
        elif method == "notifications/message":
            self.log.note(item.params)
        elif method == "notifications/resources/updated":
            self._resource_updated(item.params.uri)

    def _tools_changed(self) -> None:
        self._relist = True
        self._wake.set()

    def _resources_changed(self) -> None:
        self._relist_resources = True
        self._wake.set()

    def _on_roots_changed(self) -> None:
        """From ``McpRoots.set``, always on this session's loop (see ``McpRoots``)."""
        self._roots_changed = True
        self._wake.set()
        self._project_changed()

    def _client_callbacks(self, sdk: SimpleNamespace) -> dict[str, Any]:
        """Keyword arguments for ``ClientSession``: the server-initiated requests Tebiki
        answers (each one the SDK also advertises as a client capability). Roots here;
        sampling and elicitation are added alongside."""
        return {"list_roots_callback": self.roots.list_roots_callback(sdk.types),
                **server_request_callbacks(self.name, self.server_requests)}

    async def serve(self, started: asyncio.Future[None]) -> None:
        """The task's body: start the server, keep its session until stopped or ended;
        ``started`` is settled once it runs or has failed."""
        reached_running = retry_as_sse = False
        try:
            sdk = await load_sdk()
            async with contextlib.AsyncExitStack() as stack:
                read, write = await self._open_transport(sdk, stack)
                watched = WatchedReadStream(read, self._transport_ended)
                session = await stack.enter_async_context(sdk.ClientSession(
                    watched, write, message_handler=self._on_message,
                    client_info=sdk.types.Implementation(name=CLIENT_NAME,
                                                         version=client_version()),
                    **self._client_callbacks(sdk)))
                stack.callback(self.roots.subscribe(self._on_roots_changed))
                stack.callback(self.log.subscribe(self._wake.set))
                with anyio.fail_after(self._startup_timeout_s):
                    await negotiate(session)
                    self.instructions = (session.instructions or "").strip()
                    self.capabilities = server_capabilities(session)
                    tools = await self._list_tools(session, sdk)
                    self.has_resources = await offers_resources(session, self.capabilities)
                    await self.log.send_level(session, sdk.types, self.capabilities, self.name)
                if self.ended:
                    raise ConnectionError("the server closed the connection during startup")
                self.tools = tools
                self.session = session
                reached_running = True
                self.running_since = time.monotonic()
                self._report("running", self._running_message(len(tools)))
                settle(started)
                # The project may have changed after this run's folder was chosen: a change
                # while starting is acted on only once the server runs.
                self._project_changed()
                async with anyio.create_task_group() as listening:
                    # A 2026-07-28 server's changes raise the same flags as notifications.
                    listening.start_soon(functools.partial(
                        listen_for_changes, session, self.capabilities, self.name,
                        tools_changed=self._tools_changed,
                        resources_changed=self._resources_changed))
                    await self._idle(session, sdk)
                    listening.cancel_scope.cancel()
        except asyncio.CancelledError:
            pass  # stop() cancelled a startup, or the loop is shutting down: end quietly
        except Exception as exc:
            if not self.stopping and not reached_running:
                retry_as_sse = self._sse_next(exc)
                if not retry_as_sse:
                    await self.collect_stderr()
                    self._report("failed", self._first_failure or self._startup_failure(exc))
            elif not self.stopping:
                log.warning("MCP server %s ended: %s", self.name, describe_exception(exc))
                # An HTTP server may come back: the next call reconnects.
                self.lost = self.config.transport != "stdio"
                if self._state() != "failed":
                    self._report("failed", f"the connection failed: {describe_exception(exc)}"
                                 + ("; Tebiki reconnects at the next call" if self.lost else ""))
        finally:
            self.session = None
            self._unreadable.summarise()
            if self._stderr is not None:
                self._stderr.close_write_end()
            if self.ended and not self.stopping and self._state() == "running":
                self._report("failed", "the connection ended")
            if not retry_as_sse:
                settle(started)
        if retry_as_sse:
            await self.serve(started)

    def _sse_next(self, exc: BaseException) -> bool:
        """After a refused Streamable HTTP start: whether to try the URL as legacy SSE."""
        if self.legacy_sse or not may_be_legacy_sse(self.config, self._http_status):
            return False
        self._first_failure = self._startup_failure(exc)
        self.legacy_sse, self.ended, self._http_status = True, False, 0
        return True

    async def _open_transport(self, sdk: SimpleNamespace,
                              stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        # ${VAR} references anywhere in args, env, headers, url and cwd; an unset variable or a
        # malformed reference fails the start with the server and field named.
        cfg = expand_server_config(self.config)
        if cfg.transport == "stdio":
            env = dict(cfg.env)
            launch = self.launch = stdio_launch(cfg, self.sandbox, env,
                                                sdk.default_environment(), self.roots.first)
            stderr = self._stderr = StderrTail(cfg.name)
            params = sdk.StdioServerParameters(
                command=launch.command, args=launch.args, env=env or None, cwd=launch.cwd)
            try:
                return await stack.enter_async_context(
                    sdk.stdio_client(params, errlog=stderr.write_file))
            finally:
                stderr.close_write_end()
        return await open_url_transport(
            sdk, stack, cfg, auth=self.oauth.auth_for(cfg) if self.oauth is not None else None,
            sse=self.legacy_sse, note_status=self._note_http_status)

    def _note_http_status(self, status: int) -> None:
        if status >= 400:
            self._http_status = status

    async def _idle(self, session: Any, sdk: SimpleNamespace) -> None:
        """Park until stopped or the transport ends; re-list tools when the server says so,
        tell it when the roots changed, and ping an idle HTTP server (nothing else notices
        that one died: there is no process to watch)."""
        http = self.config.transport != "stdio"
        while not (self.stopping or self.ended):
            try:
                await asyncio.wait_for(self._wake.wait(),
                                       self._keepalive_s if http else None)
            except TimeoutError:
                if not await self._still_answering(session):
                    return
                continue
            self._wake.clear()
            if self._roots_changed and not (self.stopping or self.ended):
                self._roots_changed = False
                try:
                    await session.send_notification(sdk.types.RootsListChangedNotification())
                except Exception as exc:
                    log.warning("MCP server %s: telling it the roots changed failed: %s",
                                self.name, describe_exception(exc))
            if self._relist and not (self.stopping or self.ended):
                self._relist = False
                try:
                    with anyio.fail_after(self._startup_timeout_s):
                        tools = await self._list_tools(session, sdk)
                except Exception as exc:
                    log.warning("MCP server %s: re-listing tools failed: %s", self.name,
                                describe_exception(exc))
                    continue
                self.tools = tools
                self._report("running", self._running_message(len(tools)))
            if self.log.level_pending and not (self.stopping or self.ended):
                await self.log.send_level(session, sdk.types, self.capabilities, self.name)
            if self._relist_resources and not (self.stopping or self.ended):
                self._relist_resources = False
                await self._recheck_resources(session)

    async def _recheck_resources(self, session: Any) -> None:
        """After ``resources/list_changed``: a first resource gets its ``read_resource`` tool."""
        has_resources = await resources_now(session, self.capabilities, self.name,
                                            self._startup_timeout_s)
        if has_resources is not None and has_resources != self.has_resources:
            self.has_resources = has_resources
            self._report("running", self._running_message(len(self.tools)))

    async def _still_answering(self, session: Any) -> bool:
        """A liveness check (``mcp.revision.still_answering``); when it fails, mark the server
        lost (the next call reconnects) and say why."""
        failure = await still_answering(session, min(self._keepalive_s, 10.0) + 5.0, self.name)
        if failure is None or self.stopping or self.ended:
            return failure is None
        self.lost = True
        why = http_status_text(self._http_status) or describe_exception(failure)
        self._report("failed", f"the server stopped answering ({why}); Tebiki reconnects "
                               "at the next call")
        return False

    async def _list_tools(self, session: Any, sdk: SimpleNamespace) -> list[dict[str, Any]]:
        tools = await list_all_tools(session, sdk)
        offered = offered_tools(tools)
        self.hidden_tools = len(tools) - len(offered)
        return offered

    async def collect_stderr(self) -> None:
        """Wait (briefly) for the rest of a stdio server's stderr, for a failure's text."""
        if self._stderr is not None:
            self._stderr.close_write_end()
            await self._stderr.wait_eof(1.0)

    def _running_message(self, tool_count: int) -> str:
        return texts.running_message(tool_count, self.hidden_tools, self.launch, self.legacy_sse)

    def _startup_failure(self, exc: BaseException) -> str:
        exc = leaf_exception(exc)
        text, needs_auth = texts.startup_failure_text(
            exc, sandbox_reason=self.sandbox.status.reason, launch=self.launch,
            refused=auth_refusal(exc, self.name, self.oauth), http_status=self._http_status,
            startup_timeout_s=self._startup_timeout_s, ended=self.ended,
            has_stderr=bool(self.stderr_tail()))
        self.needs_auth = self.needs_auth or needs_auth
        return text + self._unreadable.failure_note()


def settle(future: asyncio.Future[None]) -> None:
    """Tell whoever awaits the start that it has run or failed (at most once)."""
    if not future.done():
        future.set_result(None)
