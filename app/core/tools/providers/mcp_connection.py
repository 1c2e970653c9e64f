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

Death is noticed without polling: the session reads through ``_WatchedReadStream``, which
reports the end of the server's output (process exit, closed pipe, dropped HTTP session).
The server's stderr goes to a pipe drained by a small thread into a bounded buffer, so a
chatty server can never block on a full pipe, and the last lines explain a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Literal

import anyio

from app.core.tools.base import ToolResult
from app.core.tools.providers.mcp_config import McpConfigError, McpServerConfig, resolve_values

log = logging.getLogger(__name__)

ServerState = Literal["stopped", "starting", "running", "failed", "disabled"]

STDERR_BUFFER_BYTES = 64 * 1024
STDERR_TAIL_CHARS = 4000
MAX_TOOL_PAGES = 50
CLIENT_NAME = "tebiki"


@dataclass(frozen=True)
class ServerStatus:
    """What the Settings tab shows for one server."""

    name: str
    state: ServerState
    message: str = ""
    stderr_tail: str = ""
    tool_count: int = 0


# -- the SDK, imported lazily ------------------------------------------------------------------

_SDK: SimpleNamespace | None = None
_SDK_LOCK = threading.Lock()


def _import_sdk() -> SimpleNamespace:
    global _SDK
    with _SDK_LOCK:
        if _SDK is None:
            import httpx2
            import mcp_types
            from mcp import ClientSession, StdioServerParameters, stdio_client
            from mcp.client.streamable_http import streamable_http_client

            _SDK = SimpleNamespace(ClientSession=ClientSession,
                                   StdioServerParameters=StdioServerParameters,
                                   stdio_client=stdio_client,
                                   streamable_http_client=streamable_http_client,
                                   httpx=httpx2, types=mcp_types)
        return _SDK


async def load_sdk() -> SimpleNamespace:
    """The SDK takes most of a second to import: do it off the GUI thread, once."""
    if _SDK is not None:
        return _SDK
    return await asyncio.to_thread(_import_sdk)


def _client_version() -> str:
    try:
        from importlib.metadata import version

        return version("tebiki")
    except Exception:
        return "0"


# -- stderr ------------------------------------------------------------------------------------


class StderrTail:
    """A pipe for a server's stderr, drained by a daemon thread into a bounded buffer."""

    def __init__(self, name: str, limit: int = STDERR_BUFFER_BYTES) -> None:
        read_fd, write_fd = os.pipe()
        self.write_file = os.fdopen(write_fd, "wb", buffering=0)
        self._read_fd = read_fd
        self._limit = limit
        self._buffer = bytearray()
        self._lock = threading.Lock()
        self._eof = threading.Event()
        self._name = name
        self._thread = threading.Thread(target=self._pump, name=f"mcp-stderr-{name}",
                                        daemon=True)
        self._thread.start()

    def close_write_end(self) -> None:
        """Drop our copy once the child has its own, or EOF would never come."""
        with contextlib.suppress(OSError):
            self.write_file.close()

    def _pump(self) -> None:
        pending = b""
        try:
            while True:
                chunk = os.read(self._read_fd, 4096)
                if not chunk:
                    break
                with self._lock:
                    self._buffer += chunk
                    if len(self._buffer) > self._limit:
                        del self._buffer[:len(self._buffer) - self._limit]
                if log.isEnabledFor(logging.DEBUG):
                    *lines, pending = (pending + chunk).split(b"\n")
                    for line in lines:
                        log.debug("mcp %s stderr: %s", self._name,
                                  line.decode("utf-8", "replace"))
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                os.close(self._read_fd)
            self._eof.set()

    @property
    def at_eof(self) -> bool:
        return self._eof.is_set()

    def text(self, max_chars: int = STDERR_TAIL_CHARS) -> str:
        with self._lock:
            data = bytes(self._buffer)
        text = data.decode("utf-8", "replace").rstrip()
        if len(text) > max_chars:
            cut = text[-max_chars:]
            newline = cut.find("\n")
            text = "…\n" + (cut[newline + 1:] if 0 <= newline < 200 else cut)
        return text

    async def wait_eof(self, timeout: float) -> None:
        """Give the pump a moment to collect a dead server's last words."""
        deadline = time.monotonic() + timeout
        while not self._eof.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)


# -- the session's read side, watched for its end ----------------------------------------------


class _WatchedReadStream:
    """Wraps the transport's read stream and reports when the server's output ends."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end
        self._ended = False

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._on_end()

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._end()
            raise

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:  # e.g. ``last_context`` of context streams
        return getattr(self._inner, name)


# -- results -----------------------------------------------------------------------------------


def _approx_bytes(b64: Any) -> int:
    return len(b64) * 3 // 4 if isinstance(b64, str) else 0


def content_to_text(content: Sequence[Mapping[str, Any]], structured: Any = None) -> str:
    """MCP content blocks as text for the model; what text cannot carry is named, not dropped."""
    parts: list[str] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind in ("image", "audio"):
            mime = block.get("mimeType") or "unknown type"
            parts.append(f"[{kind} returned by the tool ({mime}, about "
                         f"{_approx_bytes(block.get('data'))} bytes); Tebiki passes only text to "
                         "the model, so it is not shown]")
        elif kind == "resource":
            resource = block.get("resource") or {}
            uri = resource.get("uri", "?")
            if "text" in resource:
                parts.append(f"[resource {uri}]\n{resource.get('text', '')}")
            else:
                mime = resource.get("mimeType") or "binary"
                parts.append(f"[resource {uri} ({mime}, about "
                             f"{_approx_bytes(resource.get('blob'))} bytes) not shown: binary]")
        elif kind == "resource_link":
            label = block.get("name") or block.get("title") or ""
            parts.append(f"[resource link {label} {block.get('uri', '?')}]".replace("  ", " "))
        else:
            parts.append(f"[a content block of type {kind!r} that Tebiki cannot show]")
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    return "\n\n".join(parts)


def truncate(text: str, limit: int) -> str:
    if limit <= 0 or len(text) <= limit:
        return text
    return (text[:limit] + f"\n\n[… output truncated: showing {limit:,} of {len(text):,} "
            "characters]")


def leaf_exception(exc: BaseException) -> BaseException:
    """The first real failure inside (nested) exception groups, which anyio task groups raise."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (inner or list(exc.exceptions))[0]
    return exc


def describe_exception(exc: BaseException) -> str:
    """The innermost useful message (anyio wraps failures in exception groups)."""
    exc = leaf_exception(exc)
    error = getattr(exc, "error", None)  # MCPError carries ErrorData
    message = getattr(error, "message", None) or str(exc)
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"program not found: {exc.filename}"
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}" + (f": {exc.filename}" if exc.filename else "")
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


# -- the connection ----------------------------------------------------------------------------


class McpConnection:
    """One configured server. ``start``/``stop``/``call_tool`` are called from the event loop."""

    def __init__(self, config: McpServerConfig, *,
                 on_change: Callable[[McpConnection], None] | None = None,
                 startup_timeout_s: float = 60.0, stop_timeout_s: float = 10.0) -> None:
        self.config = config
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

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def running(self) -> bool:
        return self.state == "running" and self._session is not None

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
        if self.config.disabled:
            self._set("disabled", "disabled in the configuration")
            return
        if self._task is None or self._task.done():
            self._stopping = self._ended = self._relist = False
            self._wake = asyncio.Event()
            self._stderr = None
            self._events.clear()
            self.tools = []
            self._started = asyncio.get_running_loop().create_future()
            self._set("starting", "")
            started = self._started
            task = asyncio.create_task(self._serve(started), name=f"tebiki-mcp-{self.name}")
            task.add_done_callback(lambda t: self._served(t, started))
            self._task = task
        assert self._started is not None
        # Shielded: a caller that gives up waiting must not tear the startup down half-way.
        await asyncio.shield(self._started)

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
            log.debug("MCP server %s sent something unreadable: %s", self.name, item)
            self._events.append(f"transport error: {describe_exception(item)}")
            return
        if getattr(item, "method", None) == "notifications/tools/list_changed":
            self._relist = True
            self._wake.set()

    async def _serve(self, started: asyncio.Future[None]) -> None:
        reached_running = False
        try:
            sdk = await load_sdk()
            async with contextlib.AsyncExitStack() as stack:
                read, write = await self._open_transport(sdk, stack)
                watched = _WatchedReadStream(read, self._transport_ended)
                session = await stack.enter_async_context(sdk.ClientSession(
                    watched, write, message_handler=self._on_message,
                    client_info=sdk.types.Implementation(name=CLIENT_NAME,
                                                         version=_client_version())))
                with anyio.fail_after(self._startup_timeout_s):
                    await session.initialize()
                    tools = await self._list_tools(session, sdk)
                if self._ended:
                    raise ConnectionError("the server closed the connection during startup")
                self.tools = tools
                self._session = session
                reached_running = True
                self._set("running", _count(len(tools)))
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
            if self._stderr is not None:
                self._stderr.close_write_end()
            if self._ended and not self._stopping and self.state == "running":
                self._set("failed", "the connection ended")
            _settle(started)

    async def _open_transport(self, sdk: SimpleNamespace,
                              stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        cfg = self.config
        if cfg.transport == "stdio":
            env = resolve_values(cfg.env, "env")
            stderr = self._stderr = StderrTail(cfg.name)
            params = sdk.StdioServerParameters(
                command=cfg.command, args=list(cfg.args), env=env or None,
                cwd=os.path.expanduser(cfg.cwd) if cfg.cwd else None)
            try:
                return await stack.enter_async_context(
                    sdk.stdio_client(params, errlog=stderr.write_file))
            finally:
                stderr.close_write_end()
        headers = resolve_values(cfg.headers, "header")
        client = await stack.enter_async_context(sdk.httpx.AsyncClient(
            headers=headers, timeout=sdk.httpx.Timeout(30.0, read=300.0)))
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
                self._set("running", _count(len(tools)))

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

    def _startup_failure(self, exc: BaseException) -> str:
        exc = leaf_exception(exc)
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
