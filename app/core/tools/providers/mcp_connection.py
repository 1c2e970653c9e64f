"""One MCP server: its process (or HTTP endpoint) and client session, kept alive in one task.

Why one long-lived task per server: the SDK's transports (``stdio_client``,
``streamable_http_client``) and ``ClientSession`` are anyio context managers holding task groups
and cancel scopes, which must be entered and exited by the *same* task. ``_serve`` enters them,
initializes, lists tools, then parks until it is asked to stop or the transport ends; leaving
the ``async with`` block is what closes the session and stops the process (stdin closed, then
SIGTERM/SIGKILL to the server's process group, inside the SDK's shielded shutdown), so nothing
is left behind whatever way the task ends.

Calls (``call_tool``) come from other tasks (the agent loop). That is safe: a request only puts
a message on the session's memory stream and waits for its answer on another one; the caller's
cancellation (Stop) abandons the wait at once and the SDK sends ``notifications/cancelled``.

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

from app.core.sandbox import Sandbox, SandboxRequired, machine_sandbox
from app.core.tools.base import ToolResult
from app.core.tools.providers.mcp_config import (
    McpConfigError,
    McpServerConfig,
    expand_server_config,
)
from app.core.tools.providers.mcp_results import (
    content_to_text,
    describe_exception,
    leaf_exception,
    truncate,
)
from app.core.tools.providers.mcp_transport import (
    StderrTail,
    StdioLaunch,
    WatchedReadStream,
    client_version,
    load_sdk,
    sandbox_hint,
    stdio_launch,
)

log = logging.getLogger(__name__)

ServerState = Literal["stopped", "starting", "running", "failed", "disabled"]

MAX_TOOL_PAGES = 50
CLIENT_NAME = "tebiki"
# Lines on a server's stdout that are not JSON-RPC: the first few are logged (no traceback),
# then only a count at 10, 100, 1000… and once more when the server stops.
LOGGED_UNREADABLE_LINES = 3
_SDK_PARSE_FAILURE = "Failed to parse JSONRPC message from server"


class _DropSdkParseTracebacks(logging.Filter):
    """The SDK logs a full traceback for every stdout line that is not JSON-RPC (a server that
    prints its banner or progress on stdout wrote 55 MB of log in 12 s). The same failure also
    reaches ``McpConnection._on_message``, which knows the server and summarises it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != _SDK_PARSE_FAILURE


_SDK_STDIO_LOGGER = logging.getLogger("mcp.client.stdio")
if not any(isinstance(f, _DropSdkParseTracebacks) for f in _SDK_STDIO_LOGGER.filters):
    _SDK_STDIO_LOGGER.addFilter(_DropSdkParseTracebacks())


def _unreadable_line(exc: Exception) -> str:
    """The offending stdout line (shortened) when the SDK's error carries it."""
    errors = getattr(exc, "errors", None)
    try:
        found = errors()[0].get("input") if callable(errors) else None
    except Exception:
        found = None
    text = found if isinstance(found, str) else describe_exception(exc)
    return text if len(text) <= 200 else text[:200] + "…"


@dataclass(frozen=True)
class ServerStatus:
    """What the Settings tab shows for one server."""

    name: str
    state: ServerState
    message: str = ""
    stderr_tail: str = ""
    tool_count: int = 0


# -- the connection ----------------------------------------------------------------------------


class McpConnection:
    """One configured server. ``start``/``stop``/``call_tool`` are called from the event loop."""

    def __init__(self, config: McpServerConfig, *,
                 on_change: Callable[[McpConnection], None] | None = None,
                 startup_timeout_s: float = 60.0, stop_timeout_s: float = 10.0,
                 sandbox: Sandbox | None = None) -> None:
        self.config = config
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
        self._unreadable = 0  # stdout lines of this run that were not JSON-RPC

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def running(self) -> bool:
        return self.state == "running" and self._session is not None

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
                            len(self.tools))

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
            self._unreadable = 0
            self.tools = []
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
        if self.config.disabled:
            self._set("disabled", "disabled in the configuration")
        else:
            self._set("stopped", "")

    async def restart(self) -> None:
        await self.stop()
        await self.start()

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
            what = "exited" if self.config.transport == "stdio" else "closed the connection"
            self._set("failed", f"the server {what} unexpectedly")

    async def _on_message(self, message: Any) -> None:
        item = getattr(message, "root", message)  # mcp 1.x wraps notifications in a RootModel
        if isinstance(item, Exception):
            if isinstance(item, ValueError) and callable(getattr(item, "errors", None)):
                self._note_unreadable(item)  # a line that is not JSON-RPC (pydantic's error)
            else:
                log.debug("MCP server %s: transport error: %s", self.name,
                          describe_exception(item))
                self._events.append(f"transport error: {describe_exception(item)}")
            return
        if getattr(item, "method", None) == "notifications/tools/list_changed":
            self._relist = True
            self._wake.set()

    def _note_unreadable(self, exc: Exception) -> None:
        """One line of output that is not JSON-RPC: log the first few, then count."""
        self._unreadable += 1
        n = self._unreadable
        if n <= LOGGED_UNREADABLE_LINES:
            line = _unreadable_line(exc)
            self._events.append(f"not JSON-RPC: {line}")
            log.warning("MCP server %s wrote a line that is not JSON-RPC (servers must write "
                        "only protocol messages on stdout; logs belong on stderr): %r%s",
                        self.name, line,
                        "; further such lines are only counted"
                        if n == LOGGED_UNREADABLE_LINES else "")
        elif n >= 10 and str(n).strip("0") == "1":  # 10, 100, 1000…
            log.warning("MCP server %s: %d lines on stdout were not JSON-RPC so far",
                        self.name, n)

    def _summarise_unreadable(self) -> None:
        n = self._unreadable
        if n > LOGGED_UNREADABLE_LINES:
            log.warning("MCP server %s: %d lines on stdout were not JSON-RPC in this run "
                        "(%d logged)", self.name, n, LOGGED_UNREADABLE_LINES)

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
                                                         version=client_version())))
                with anyio.fail_after(self._startup_timeout_s):
                    await session.initialize()
                    tools = await self._list_tools(session, sdk)
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
                await self._collect_stderr()
                self._set("failed", self._startup_failure(exc))
            elif not self._stopping:
                log.warning("MCP server %s ended: %s", self.name, describe_exception(exc))
                if self.state != "failed":
                    self._set("failed", f"the connection failed: {describe_exception(exc)}")
        finally:
            self._session = None
            self._summarise_unreadable()
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
                                                sdk.default_environment())
            stderr = self._stderr = StderrTail(cfg.name)
            params = sdk.StdioServerParameters(
                command=launch.command, args=launch.args, env=env or None, cwd=launch.cwd)
            try:
                return await stack.enter_async_context(
                    sdk.stdio_client(params, errlog=stderr.write_file))
            finally:
                stderr.close_write_end()
        client = await stack.enter_async_context(sdk.httpx.AsyncClient(
            headers=dict(cfg.headers), timeout=sdk.httpx.Timeout(30.0, read=300.0)))
        return await stack.enter_async_context(
            sdk.streamable_http_client(cfg.url, http_client=client))

    async def _idle(self, session: Any, sdk: SimpleNamespace) -> None:
        """Park until stopped or the transport ends; re-list tools when the server says so."""
        while not (self._stopping or self._ended):
            await self._wake.wait()
            self._wake.clear()
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

    async def _list_tools(self, session: Any, sdk: SimpleNamespace) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for _page in range(MAX_TOOL_PAGES):
            params = sdk.types.PaginatedRequestParams(cursor=cursor) if cursor else None
            result = await session.list_tools(params=params)
            wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            tools += [t for t in wire.get("tools", []) if isinstance(t, dict) and t.get("name")]
            cursor = wire.get("nextCursor")
            if not cursor:
                break
        return tools

    async def _collect_stderr(self) -> None:
        if self._stderr is not None:
            self._stderr.close_write_end()
            await self._stderr.wait_eof(1.0)

    def _running_message(self, tool_count: int) -> str:
        note = self.launch.note if self.launch is not None else ""
        return f"{_count(tool_count)}; {note}" if note else _count(tool_count)

    def _startup_failure(self, exc: BaseException) -> str:
        exc = leaf_exception(exc)
        if isinstance(exc, SandboxRequired):
            return ("not started: the sandbox is required (\"Require the sandbox\" is on in "
                    f"Settings) and it is not available here: {self.sandbox.status.reason}. "
                    "Fix that, or switch off \"Require the sandbox\" to start this server "
                    "unsandboxed.")
        hint = sandbox_hint(self.launch) if self.launch is not None else ""
        return self._failure_text(exc) + hint

    def _failure_text(self, exc: BaseException) -> str:
        if isinstance(exc, McpConfigError):
            return "cannot start: " + "; ".join(exc.errors)
        if isinstance(exc, ImportError):
            return ("cannot start: the MCP SDK is not installed (pip install 'mcp>=2.3'): "
                    f"{exc}")
        if isinstance(exc, TimeoutError):
            return (f"the server did not finish starting within {self._startup_timeout_s:g}s "
                    "(initialize and list tools)")
        detail = describe_exception(exc)
        if "Connection closed" in detail or self._ended:
            return "the server exited during startup" + (
                "; see its stderr below" if self.stderr_tail() else "")
        return f"cannot start: {detail}"

    # -- calls -------------------------------------------------------------------------------

    async def call_tool(self, remote_name: str, arguments: Mapping[str, Any], *,
                        timeout_s: float, max_output_chars: int = 50_000,
                        label: str | None = None) -> ToolResult:
        """Run one tool. Errors of every kind become ``ToolResult.error``; Stop cancels.

        ``label`` is the name the model knows the tool by, used in messages.
        """
        tool_name = label or remote_name
        session = self._session
        if not self.running or session is None:
            return ToolResult.error(self.unavailable_message(tool_name))
        try:
            with anyio.fail_after(timeout_s):
                result = await session.call_tool(remote_name, dict(arguments))
        except TimeoutError:
            return ToolResult.error(
                f"{tool_name} on MCP server {self.name!r} did not answer within {timeout_s:g}s, "
                "so Tebiki stopped waiting (the server may still be working on it). Try a "
                "smaller request, or ask the user to raise the server's \"timeout\" in "
                "Settings → MCP servers.")
        except Exception as exc:
            if self._stopping:
                return ToolResult.error(
                    f"MCP server {self.name!r} was stopped or restarted while {tool_name} was "
                    "running, so there is no result. The call's effects are unknown.")
            if self._ended or self.state == "failed":
                await self._collect_stderr()
                return ToolResult.error(self._died_message(tool_name))
            return ToolResult.error(f"MCP server {self.name!r} could not run {tool_name}: "
                                    f"{describe_exception(exc)}")
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        content = [b for b in wire.get("content") or [] if isinstance(b, dict)]
        text = truncate(content_to_text(content, wire.get("structuredContent")),
                        max_output_chars)
        if wire.get("isError"):
            return ToolResult.error(text or f"{tool_name} reported an error without a message.")
        return ToolResult.ok(text)

    def unavailable_message(self, tool_name: str) -> str:
        state = {"failed": "has failed", "stopped": "is stopped", "starting": "is still starting",
                 "disabled": "is disabled"}.get(self.state, f"is {self.state}")
        text = f"{tool_name} is unavailable: MCP server {self.name!r} {state}"
        if self.message:
            text += f" ({self.message})"
        text += ". Ask the user to check or restart it in Settings → MCP servers."
        tail = self.stderr_tail()
        if tail and self.state == "failed":
            text += f"\nLast output on its stderr:\n{tail}"
        return text

    def _died_message(self, tool_name: str) -> str:
        text = (f"MCP server {self.name!r} stopped while running {tool_name}: "
                f"{self.message or 'the connection ended'}. The call's effects are unknown. Its "
                "tools return errors until the user restarts it in Settings → MCP servers.")
        tail = self.stderr_tail()
        if tail:
            text += f"\nLast output on its stderr:\n{tail}"
        return text


def _count(n: int) -> str:
    return f"{n} tool" + ("" if n == 1 else "s")


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
