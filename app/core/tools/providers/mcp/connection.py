"""One MCP server as the rest of the app sees it: its configuration, state and tools, and
starting, stopping, reconnecting and calling it.

Each run of the server is a ``ServerRun`` living in a task of its own, whose body is
``ServerRun.serve`` (see ``mcp.server_task`` for why one task must own the transport and
session). ``begin`` makes the run and its task and ``stop`` ends it; the state they report, and
what the last run found (tools, instructions, capabilities), is what the provider and the
Settings tab read (``status()``, see ``mcp.server_status``).

Calls (``call_tool``, see ``mcp.tool_call``) come from other tasks (the agent loop). That is
safe: a request only puts a message on the session's memory stream and waits for its answer on
another one; the caller's cancellation (Stop) abandons the wait at once and the SDK sends
``notifications/cancelled``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from app.core.sandbox import Sandbox, machine_sandbox
from app.core.tools.base import ProgressFn, ToolResult
from app.core.tools.providers.mcp import connection_texts as texts
from app.core.tools.providers.mcp import tool_call as mcp_tool_call
from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.crash_restart import CrashRestarts
from app.core.tools.providers.mcp.oauth.errors import (
    CredentialsRejected,
    SignInRequired,
    auth_failure_status,
)
from app.core.tools.providers.mcp.oauth.sign_in import McpOAuth, auth_refusal
from app.core.tools.providers.mcp.project_follow import ProjectFollower
from app.core.tools.providers.mcp.resource_updates import ResourceUpdates
from app.core.tools.providers.mcp.roots import McpRoots
from app.core.tools.providers.mcp.server_log import ServerLog
from app.core.tools.providers.mcp.server_requests import HandlerSource
from app.core.tools.providers.mcp.server_status import ServerState, ServerStatus
from app.core.tools.providers.mcp.server_task import ServerRun, settle
from app.core.tools.providers.mcp.transport import StdioLaunch

log = logging.getLogger(__name__)

# The current connection of a server, by name (None when it is not configured): how the
# provider's collaborators find it, since a restart or a new configuration replaces it.
ConnectionLookup = Callable[[str], "McpConnection | None"]


class McpConnection:
    """One configured server. ``start``/``stop``/``call_tool`` are called from the event loop."""

    # Sign-in for HTTP servers (OAuth); the provider sets it. None: no auth on requests.
    oauth: McpOAuth | None = None

    def __init__(self, config: McpServerConfig, *,
                 on_change: Callable[[McpConnection], None] | None = None,
                 startup_timeout_s: float = 60.0, stop_timeout_s: float = 10.0,
                 sandbox: Sandbox | None = None, roots: McpRoots | None = None,
                 keepalive_s: float = 30.0, server_log: ServerLog | None = None) -> None:
        self.config = config
        # Its log messages and the level it is asked for, across its runs.
        self.log = server_log if server_log is not None else ServerLog()
        # The resources read from it, subscribed to and marked when updated, across runs.
        self.resource_updates = ResourceUpdates(config.name)
        # The backoff of restarts after crashes (stdio), across its runs.
        self.crash_restarts = CrashRestarts()
        # The project folder(s): answered to roots/list, and where stdio servers start.
        self.roots = roots if roots is not None else McpRoots()
        # Who answers the server's sampling / elicitation requests (the provider sets it).
        self.server_requests: HandlerSource = lambda: None
        # How often an idle HTTP server is pinged, so one that died is not shown "running".
        self._keepalive_s = keepalive_s
        self.runs = 0  # starts so far, so concurrent callers reconnect only once
        # The app's sandbox setting, read at each start (the provider keeps it current).
        self.sandbox = sandbox if sandbox is not None else machine_sandbox()
        self.state: ServerState = "disabled" if config.disabled else "stopped"
        self.message = "disabled in the configuration" if config.disabled else ""
        self._on_change = on_change
        self._startup_timeout_s = startup_timeout_s
        self._stop_timeout_s = stop_timeout_s
        self._task: asyncio.Task[None] | None = None
        self._started: asyncio.Future[None] | None = None
        # The current (or last) run; before the first start, one that never runs. Its tools
        # are kept when the server dies, so they stay visible and answer with an error until
        # it is restarted.
        self._run = self._new_run()
        # Restarts a stdio server in the new project folder once its calls are done.
        self._follower = ProjectFollower(self)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def running(self) -> bool:
        return self.state == "running" and self._run.session is not None

    @property
    def session(self) -> Any:
        """The live client session, or None when the server is not running."""
        return self._run.session if self.running else None

    @property
    def stopping(self) -> bool:
        """A stop (or restart) of this run has begun."""
        return self._run.stopping

    @property
    def ended(self) -> bool:
        """The transport of this run has ended (process exit, closed connection)."""
        return self._run.ended

    @property
    def sandboxed(self) -> bool:
        """Whether the server's process runs in the OS sandbox (its current or last run)."""
        return self.launch is not None and self.launch.sandboxed

    # What the current (or last) run found; see ``ServerRun`` for each.

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self._run.tools

    @property
    def instructions(self) -> str:
        return self._run.instructions

    @property
    def capabilities(self) -> dict[str, Any]:
        return self._run.capabilities

    @property
    def has_resources(self) -> bool:
        return self._run.has_resources

    @property
    def lost(self) -> bool:
        return self._run.lost

    @property
    def restart_due(self) -> bool:
        """A stdio server that crashed (or whose restart after a crash failed): the next call
        restarts it (``reconnect``, see ``mcp.crash_restart``)."""
        return self.state == "failed" and self.config.transport == "stdio" and (
            self._run.crashed or self.crash_restarts.pending)

    @property
    def launch(self) -> StdioLaunch | None:
        """How the current (or last) run was started; None before the first stdio start."""
        return self._run.launch

    def stderr_tail(self) -> str:
        return self._run.stderr_tail()

    async def collect_stderr(self) -> None:
        """Wait (briefly) for the rest of a stdio server's stderr, for a failure's text."""
        await self._run.collect_stderr()

    def status(self) -> ServerStatus:
        return ServerStatus(self.name, self.state, self.message, self.stderr_tail(),
                            len(self.tools), self._run.hidden_tools, self._run.needs_auth)

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
            run = self._run = self._new_run()
            self.runs += 1
            self._started = asyncio.get_running_loop().create_future()
            self._set("starting", "")
            started = self._started
            task = asyncio.create_task(run.serve(started), name=f"tebiki-mcp-{self.name}")
            task.add_done_callback(lambda t: self._served(t, started))
            self._task = task
        assert self._started is not None
        return self._started

    async def stop(self) -> None:
        """Stop the server (its process is gone when this returns) and forget its tools."""
        task, run = self._task, self._run
        run.request_stop()
        if task is not None and not task.done():
            if self.state == "starting" or run.session is None:
                task.cancel()  # still inside initialize: nothing to finish politely
            done, _ = await asyncio.wait({task}, timeout=self._stop_timeout_s)
            if not done:
                log.warning("MCP server %s did not stop in time; cancelling", self.name)
                task.cancel()
                await asyncio.wait({task}, timeout=self._stop_timeout_s)
        if self._task is not task:
            return  # a start() came in meanwhile; that run is not ours to clear
        self._task = None
        self._run.tools = []
        self._run.instructions = ""
        if self.config.disabled:
            self._set("disabled", "disabled in the configuration")
        else:
            self._set("stopped", "")

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    async def reconnect(self) -> None:
        """Restart after the connection was lost (HTTP) or the server crashed (stdio, after
        its backoff, see ``mcp.crash_restart``). While the server stays unreachable its last
        tools stay listed (answering errors) and it stays due, so the next call tries again
        and works once the server is back, with no manual restart."""
        kept = self.tools, self.instructions, self.capabilities, self.has_resources
        crashed = self.restart_due
        if crashed:
            run = self._run
            ran = (run.running_since, run.ended_at) if run.crashed else (None, None)
            await asyncio.sleep(self.crash_restarts.wait_s(*ran))
            if not self.restart_due:
                return  # restarted (or stopped) in Settings meanwhile
        await self.restart()
        run = self._run  # the new run (the old one when the configuration keeps it stopped)
        if crashed:
            self.crash_restarts.restarted(self.running)
        if self.state == "failed" and not run.needs_auth:
            run.tools, run.instructions, run.capabilities, run.has_resources = kept
            if crashed:
                self._set("failed", texts.restart_failed_text(self.message))
            else:
                run.lost = True
                self._set("failed", texts.unreachable_text(self.message))

    def show_message(self, message: str) -> None:
        """A new status message, same state (e.g. a restart that is due)."""
        self._set(self.state, message)

    def _new_run(self) -> ServerRun:
        return ServerRun(self.config, roots=self.roots, sandbox=self.sandbox, oauth=self.oauth,
                         server_requests=self.server_requests, keepalive_s=self._keepalive_s,
                         startup_timeout_s=self._startup_timeout_s,
                         state=lambda: self.state, report=self._set,
                         project_changed=self._project_changed, server_log=self.log,
                         resource_updates=self.resource_updates)

    def _project_changed(self) -> None:
        self._follower.check()

    def _set(self, state: ServerState, message: str) -> None:
        self.state, self.message = state, message
        if self._on_change is not None:
            try:
                self._on_change(self)
            except Exception:
                log.exception("MCP status listener failed")

    def _served(self, task: asyncio.Task[None], started: asyncio.Future[None]) -> None:
        """Runs however the task ended, even when it was cancelled before its first step."""
        settle(started)
        if not task.cancelled() and task.exception() is not None:
            log.error("MCP server %s task failed", self.name, exc_info=task.exception())
        if self._task is task and self.state == "starting":
            self._set("stopped", "")

    # -- calls -------------------------------------------------------------------------------

    async def call_tool(self, remote_name: str, arguments: Mapping[str, Any], *,
                        timeout_s: float, max_output_chars: int = 50_000,
                        label: str | None = None,
                        progress: ProgressFn | None = None) -> ToolResult:
        """Run one tool (see ``mcp.tool_call``). Errors of every kind become
        ``ToolResult.error``; Stop cancels.

        ``label`` is the name the model knows the tool by, used in messages. With
        ``progress`` the request carries a progress token and the server's progress
        notifications are passed to it (``ToolContext.progress``).

        A call made while the server is due to restart in a new project folder waits for that
        restart and runs on the restarted server (see ``mcp.project_follow``).
        """
        async with self.request_slot():
            return await mcp_tool_call.call_tool(self, remote_name, arguments,
                                                 timeout_s=timeout_s,
                                                 max_output_chars=max_output_chars, label=label,
                                                 progress=progress)

    @contextlib.asynccontextmanager
    async def request_slot(self) -> AsyncIterator[None]:
        """Around one request to the server (a tool call, a resource read, a prompt): it waits
        for a restart into a new project folder that is due, and holds the next one off until
        it ends (see ``mcp.project_follow``)."""
        await self._follower.settled()
        with self._follower.counted_call():
            yield

    def mark_needs_auth(self, refused: SignInRequired | CredentialsRejected) -> None:
        """A call met a 401 (the auth raised it, or marked the server): the server is in
        "needs sign-in", since the session cannot go on without it."""
        self._run.needs_auth = True
        self._set("failed", auth_failure_status(refused))

    def refusal(self, exc: BaseException) -> SignInRequired | CredentialsRejected | None:
        """The 401 behind a failure, if any."""
        return auth_refusal(exc, self.name, self.oauth)

    def unavailable_message(self, tool_name: str) -> str:
        return texts.unavailable_text(tool_name, self.name, self.state, self.message,
                                      self.stderr_tail())
