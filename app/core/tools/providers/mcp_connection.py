"""One MCP server: its process (or HTTP endpoint) and client session, kept alive in one task.

Why one long-lived task per server: the SDK's transports (``stdio_client``,
``streamable_http_client``) and ``ClientSession`` are anyio context managers holding task groups
and cancel scopes, which must be entered and exited by the *same* task. ``_serve`` enters them,
initializes, lists tools, then parks until it is asked to stop or the transport ends; leaving
the ``async with`` block is what closes the session and stops the process (stdin closed, then
SIGTERM/SIGKILL to the server's process group, inside the SDK's shielded shutdown), so nothing
is left behind whatever way the task ends.

Calls (``call_tool``, see ``mcp_tool_call``) come from other tasks (the agent loop). That is
safe: a request only puts a message on the session's memory stream and waits for its answer on
another one; the caller's cancellation (Stop) abandons the wait at once and the SDK sends
``notifications/cancelled``.

Death is noticed without polling: the session reads through ``WatchedReadStream``, which
reports the end of the server's output (process exit, closed pipe, dropped HTTP session).
The server's stderr goes to a pipe drained by a small thread into a bounded buffer, so a
chatty server can never block on a full pipe, and the last lines explain a failure.

A stdio server whose config has ``"sandbox"`` starts inside the OS sandbox (see
``mcp_transport.stdio_launch``); its status says whether it runs there. When the sandbox cannot
run here it does not start if the sandbox is required, and starts unsandboxed (status
"not sandboxed: …") otherwise. Servers without ``"sandbox"`` run as any other program.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Literal

import anyio

from app.core.sandbox import Sandbox, machine_sandbox
from app.core.tools.base import ProgressFn, ToolResult
from app.core.tools.providers import mcp_connection_texts as texts
from app.core.tools.providers import mcp_tool_call
from app.core.tools.providers.mcp_config import McpServerConfig, expand_server_config
from app.core.tools.providers.mcp_http_watch import recording_transport
from app.core.tools.providers.mcp_oauth import McpOAuth
from app.core.tools.providers.mcp_oauth_errors import (
    CredentialsRejected,
    SignInRequired,
    auth_failure_status,
    find_auth_failure,
)
from app.core.tools.providers.mcp_results import (
    describe_exception,
    leaf_exception,
)
from app.core.tools.providers.mcp_roots import McpRoots
from app.core.tools.providers.mcp_server_requests import (
    HandlerSource,
    server_request_callbacks,
)
from app.core.tools.providers.mcp_session_info import (
    http_status_text,
    list_all_tools,
    offered_tools,
    offers_resources,
    server_capabilities,
)
from app.core.tools.providers.mcp_stdout_noise import UnreadableLines, is_unreadable_line
from app.core.tools.providers.mcp_transport import (
    StderrTail,
    StdioLaunch,
    WatchedReadStream,
    client_version,
    load_sdk,
    stdio_launch,
)

log = logging.getLogger(__name__)

ServerState = Literal["stopped", "starting", "running", "failed", "disabled"]

CLIENT_NAME = "tebiki"


@dataclass(frozen=True)
class ServerStatus:
    """What the Settings tab shows for one server."""

    name: str
    state: ServerState
    message: str = ""
    stderr_tail: str = ""
    tool_count: int = 0
    # Tools not offered to the model (they require MCP tasks); the message says so.
    hidden_tools: int = 0
    # The server answered 401 at start: it needs sign-in (OAuth) or a token in its headers.
    needs_auth: bool = False


# -- the connection ----------------------------------------------------------------------------


class McpConnection:
    """One configured server. ``start``/``stop``/``call_tool`` are called from the event loop."""

    # Sign-in for HTTP servers (OAuth); the provider sets it. None: no auth on requests.
    oauth: McpOAuth | None = None

    def __init__(self, config: McpServerConfig, *,
                 on_change: Callable[[McpConnection], None] | None = None,
                 startup_timeout_s: float = 60.0, stop_timeout_s: float = 10.0,
                 sandbox: Sandbox | None = None, roots: McpRoots | None = None,
                 keepalive_s: float = 30.0) -> None:
        self.config = config
        # The project folder(s): answered to roots/list, and where stdio servers start.
        self.roots = roots if roots is not None else McpRoots()
        # Who answers the server's sampling / elicitation requests (the provider sets it).
        self.server_requests: HandlerSource = lambda: None
        # How often an idle HTTP server is pinged, so one that died is not shown "running".
        self._keepalive_s = keepalive_s
        # Per run, from initialize: the server's instructions and capabilities (wire dict).
        self.instructions = ""
        self.capabilities: dict[str, Any] = {}
        self.has_resources = False  # it lists resources: the model gets read_resource
        self.hidden_tools = 0
        self.needs_auth = False
        # Set when a running HTTP server stopped answering: the next call reconnects.
        self.lost = False
        self.runs = 0  # starts so far, so concurrent callers reconnect only once
        self._http_status = 0  # the last HTTP status seen (for the startup failure)
        self._roots_changed = False
        # The app's sandbox setting, read at each start (the provider keeps it current).
        self.sandbox = sandbox if sandbox is not None else machine_sandbox()
        # How the current (or last) run was started; None before the first stdio start.
        self.launch: StdioLaunch | None = None
        self.state: ServerState = "disabled" if config.disabled else "stopped"
        self.message = "disabled in the configuration" if config.disabled else ""
        # Wire-format dicts (camelCase keys) of the last listing; kept when the server dies so
        # its tools stay visible and answer with an error until it is restarted.
        self.tools: list[dict[str, Any]] = []
        self._on_change = on_change
        self._startup_timeout_s = startup_timeout_s
        self._stop_timeout_s = stop_timeout_s
        self._task: asyncio.Task[None] | None = None
        self._started: asyncio.Future[None] | None = None
        self._session: Any = None
        self._wake = asyncio.Event()
        self._stopping = False
        self._ended = False
        self._relist = False
        self._stderr: StderrTail | None = None
        self._events: deque[str] = deque(maxlen=20)  # the "tail" of HTTP servers
        # Stdout lines of this run that were not JSON-RPC (see mcp_stdout_noise).
        self._unreadable = UnreadableLines(config.name, self._events)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def running(self) -> bool:
        return self.state == "running" and self._session is not None

    @property
    def session(self) -> Any:
        """The live client session, or None when the server is not running."""
        return self._session if self.running else None

    @property
    def stopping(self) -> bool:
        """A stop (or restart) of this run has begun."""
        return self._stopping

    @property
    def ended(self) -> bool:
        """The transport of this run has ended (process exit, closed connection)."""
        return self._ended

    @property
    def sandboxed(self) -> bool:
        """Whether the server's process runs in the OS sandbox (its current or last run)."""
        return self.launch is not None and self.launch.sandboxed

    def stderr_tail(self) -> str:
        if self._stderr is not None:
            return self._stderr.text()
        return "\n".join(self._events)

    def status(self) -> ServerStatus:
        return ServerStatus(self.name, self.state, self.message, self.stderr_tail(),
                            len(self.tools), self.hidden_tools, self.needs_auth)

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the server and return once it runs or has failed (never raises for that)."""
        # Shielded: a caller that gives up waiting must not tear the startup down half-way.
        await asyncio.shield(self.begin())

    def begin(self) -> asyncio.Future[None]:
        """Start the server now (synchronously: its task exists when this returns, so a
        ``stop()`` right after cancels it) and return a future settled once it runs or has
        failed. Call it from the event loop."""
        if self.config.disabled or self.config.problem is not None:
            if self.config.disabled:
                self._set("disabled", "disabled in the configuration")
            else:
                self._set("failed", f"not started: {self.config.problem}")
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done
        if self._task is None or self._task.done():
            self._stopping = self._ended = self._relist = False
            self._wake = asyncio.Event()
            self._stderr = None
            self.launch = None
            self._events.clear()
            self._unreadable = UnreadableLines(self.name, self._events)
            self.tools = []
            self.instructions, self.capabilities, self.hidden_tools = "", {}, 0
            self.has_resources = False
            self.needs_auth = self.lost = self._roots_changed = False
            self._http_status = 0
            self.runs += 1
            self._started = asyncio.get_running_loop().create_future()
            self._set("starting", "")
            started = self._started
            task = asyncio.create_task(self._serve(started), name=f"tebiki-mcp-{self.name}")
            task.add_done_callback(lambda t: self._served(t, started))
            self._task = task
        assert self._started is not None
        return self._started

    async def stop(self) -> None:
        """Stop the server (its process is gone when this returns) and forget its tools."""
        task = self._task
        self._stopping = True
        if task is not None and not task.done():
            if self.state == "starting" or self._session is None:
                task.cancel()  # still inside initialize: nothing to finish politely
            self._wake.set()
            done, _ = await asyncio.wait({task}, timeout=self._stop_timeout_s)
            if not done:
                log.warning("MCP server %s did not stop in time; cancelling", self.name)
                task.cancel()
                await asyncio.wait({task}, timeout=self._stop_timeout_s)
        if self._task is not task:
            return  # a start() came in meanwhile; that run is not ours to clear
        self._task = None
        self.tools = []
        self.instructions = ""
        if self.config.disabled:
            self._set("disabled", "disabled in the configuration")
        else:
            self._set("stopped", "")

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    async def reconnect(self) -> None:
        """Restart after the connection was lost. While the server stays unreachable its last
        tools stay listed (answering errors) and it stays "lost", so the next call tries
        again and works once the server is back, with no manual restart."""
        kept = self.tools, self.instructions, self.capabilities, self.has_resources
        await self.restart()
        if self.state == "failed" and not self.needs_auth:
            self.tools, self.instructions, self.capabilities, self.has_resources = kept
            self.lost = True
            self._set("failed", texts.unreachable_text(self.message))

    def _set(self, state: ServerState, message: str) -> None:
        self.state, self.message = state, message
        if self._on_change is not None:
            try:
                self._on_change(self)
            except Exception:
                log.exception("MCP status listener failed")

    def _served(self, task: asyncio.Task[None], started: asyncio.Future[None]) -> None:
        """Runs however the task ended, even when it was cancelled before its first step."""
        _settle(started)
        if not task.cancelled() and task.exception() is not None:
            log.error("MCP server %s task failed", self.name, exc_info=task.exception())
        if self._task is task and self.state == "starting":
            self._set("stopped", "")

    def _transport_ended(self) -> None:
        self._ended = True
        self._wake.set()
        if not self._stopping and self.state == "running":
            self.lost = self.config.transport != "stdio"
            what = "exited" if self.config.transport == "stdio" else "closed the connection"
            self._set("failed", f"the server {what} unexpectedly")

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
        if getattr(item, "method", None) == "notifications/tools/list_changed":
            self._relist = True
            self._wake.set()

    def _on_roots_changed(self) -> None:
        """From ``McpRoots.set``, always on this session's loop (see ``McpRoots``)."""
        self._roots_changed = True
        self._wake.set()

    def _client_callbacks(self, sdk: SimpleNamespace) -> dict[str, Any]:
        """Keyword arguments for ``ClientSession``: the server-initiated requests Tebiki
        answers (each one the SDK also advertises as a client capability). Roots here;
        sampling and elicitation are added alongside."""
        return {"list_roots_callback": self.roots.list_roots_callback(sdk.types),
                **server_request_callbacks(self.name, self.server_requests)}

    async def _serve(self, started: asyncio.Future[None]) -> None:
        reached_running = False
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
                with anyio.fail_after(self._startup_timeout_s):
                    init = await session.initialize()
                    self.instructions = (getattr(init, "instructions", None) or "").strip()
                    self.capabilities = server_capabilities(init)
                    tools = await self._list_tools(session, sdk)
                    self.has_resources = await offers_resources(session, self.capabilities)
                if self._ended:
                    raise ConnectionError("the server closed the connection during startup")
                self.tools = tools
                self._session = session
                reached_running = True
                self._set("running", self._running_message(len(tools)))
                _settle(started)
                await self._idle(session, sdk)
        except asyncio.CancelledError:
            pass  # stop() cancelled a startup, or the loop is shutting down: end quietly
        except Exception as exc:
            if not self._stopping and not reached_running:
                await self.collect_stderr()
                self._set("failed", self._startup_failure(exc))
            elif not self._stopping:
                log.warning("MCP server %s ended: %s", self.name, describe_exception(exc))
                # An HTTP server may come back: the next call reconnects.
                self.lost = self.config.transport != "stdio"
                if self.state != "failed":
                    self._set("failed", f"the connection failed: {describe_exception(exc)}"
                              + ("; Tebiki reconnects at the next call" if self.lost else ""))
        finally:
            self._session = None
            self._unreadable.summarise()
            if self._stderr is not None:
                self._stderr.close_write_end()
            if self._ended and not self._stopping and self.state == "running":
                self._set("failed", "the connection ended")
            _settle(started)

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
        client = await stack.enter_async_context(sdk.httpx.AsyncClient(
            headers=dict(cfg.headers), timeout=sdk.httpx.Timeout(30.0, read=300.0),
            auth=self.oauth.auth_for(cfg) if self.oauth is not None else None,
            transport=recording_transport(sdk.httpx, self._note_http_status)))
        return await stack.enter_async_context(
            sdk.streamable_http_client(cfg.url, http_client=client))

    def _note_http_status(self, status: int) -> None:
        if status >= 400:
            self._http_status = status

    async def _idle(self, session: Any, sdk: SimpleNamespace) -> None:
        """Park until stopped or the transport ends; re-list tools when the server says so,
        tell it when the roots changed, and ping an idle HTTP server (nothing else notices
        that one died: there is no process to watch)."""
        http = self.config.transport != "stdio"
        while not (self._stopping or self._ended):
            try:
                await asyncio.wait_for(self._wake.wait(),
                                       self._keepalive_s if http else None)
            except TimeoutError:
                if not await self._still_answering(session):
                    return
                continue
            self._wake.clear()
            if self._roots_changed and not (self._stopping or self._ended):
                self._roots_changed = False
                try:
                    await session.send_notification(sdk.types.RootsListChangedNotification())
                except Exception as exc:
                    log.warning("MCP server %s: telling it the roots changed failed: %s",
                                self.name, describe_exception(exc))
            if self._relist and not (self._stopping or self._ended):
                self._relist = False
                try:
                    with anyio.fail_after(self._startup_timeout_s):
                        tools = await self._list_tools(session, sdk)
                except Exception as exc:
                    log.warning("MCP server %s: re-listing tools failed: %s", self.name,
                                describe_exception(exc))
                    continue
                self.tools = tools
                self._set("running", self._running_message(len(tools)))

    async def _still_answering(self, session: Any) -> bool:
        """Ping; when it fails (refused, session unknown, connection closed) mark the server
        lost (the next call reconnects) and say why. A slow answer is not a failure: a server
        busy with a long call may answer late, and tearing the session down would kill it."""
        try:
            with anyio.fail_after(min(self._keepalive_s, 10.0) + 5.0):
                await session.send_ping()
            return True
        except TimeoutError:
            log.debug("MCP server %s: no answer to a ping yet", self.name)
            return True
        except Exception as exc:
            if self._stopping or self._ended:
                return False
            self.lost = True
            why = http_status_text(self._http_status) or describe_exception(exc)
            self._set("failed", f"the server stopped answering ({why}); Tebiki reconnects "
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
        return texts.running_message(tool_count, self.hidden_tools, self.launch)

    def _startup_failure(self, exc: BaseException) -> str:
        exc = leaf_exception(exc)
        text, needs_auth = texts.startup_failure_text(
            exc, sandbox_reason=self.sandbox.status.reason, launch=self.launch,
            refused=self.refusal(exc), http_status=self._http_status,
            startup_timeout_s=self._startup_timeout_s, ended=self._ended,
            has_stderr=bool(self.stderr_tail()))
        self.needs_auth = self.needs_auth or needs_auth
        return text

    # -- calls -------------------------------------------------------------------------------

    async def call_tool(self, remote_name: str, arguments: Mapping[str, Any], *,
                        timeout_s: float, max_output_chars: int = 50_000,
                        label: str | None = None,
                        progress: ProgressFn | None = None) -> ToolResult:
        """Run one tool (see ``mcp_tool_call``). Errors of every kind become
        ``ToolResult.error``; Stop cancels.

        ``label`` is the name the model knows the tool by, used in messages. With
        ``progress`` the request carries a progress token and the server's progress
        notifications are passed to it (``ToolContext.progress``).
        """
        return await mcp_tool_call.call_tool(self, remote_name, arguments, timeout_s=timeout_s,
                                             max_output_chars=max_output_chars, label=label,
                                             progress=progress)

    def mark_needs_auth(self, refused: SignInRequired | CredentialsRejected) -> None:
        """A call met a 401 (the auth raised it, or marked the server): the server is in
        "needs sign-in", since the session cannot go on without it."""
        self.needs_auth = True
        self._set("failed", auth_failure_status(refused))

    def refusal(self, exc: BaseException) -> SignInRequired | CredentialsRejected | None:
        """The 401 behind a failure, if any."""
        refused = find_auth_failure(exc)
        if refused is None and self.oauth is not None and self.oauth.needs_sign_in(self.name):
            refused = SignInRequired(self.name)
        return refused

    def unavailable_message(self, tool_name: str) -> str:
        return texts.unavailable_text(tool_name, self.name, self.state, self.message,
                                      self.stderr_tail())


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
