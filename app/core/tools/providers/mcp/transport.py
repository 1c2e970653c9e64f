"""What an MCP connection is built from: the SDK (imported lazily, off the GUI thread), the
stdio server's command line (in the OS sandbox when the server opts in), its stderr pipe, and
the session's read stream watched for its end.

See ``mcp.server_task`` for how one server's task uses them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio

from app.core.sandbox import Confinement, Sandbox
from app.core.tools.providers.mcp.config.model import McpConfigError, McpServerConfig

log = logging.getLogger(__name__)

STDERR_BUFFER_BYTES = 64 * 1024
STDERR_TAIL_CHARS = 4000


# -- the SDK, imported lazily ------------------------------------------------------------------

_SDK: SimpleNamespace | None = None
_SDK_LOCK = threading.Lock()


def _import_sdk() -> SimpleNamespace:
    global _SDK
    with _SDK_LOCK:
        if _SDK is None:
            import httpx2
            import mcp_types
            from mcp import StdioServerParameters, stdio_client
            from mcp.client.sse import sse_client
            from mcp.client.stdio import get_default_environment
            from mcp.client.streamable_http import streamable_http_client

            # The SDK's session with the output-schema check kept but told apart from a
            # failed call; it imports the SDK at its top, so it loads here, with the SDK.
            from app.core.tools.providers.mcp.checked_session import CheckedClientSession

            _SDK = SimpleNamespace(ClientSession=CheckedClientSession,
                                   StdioServerParameters=StdioServerParameters,
                                   stdio_client=stdio_client,
                                   default_environment=get_default_environment,
                                   streamable_http_client=streamable_http_client,
                                   sse_client=sse_client,
                                   httpx=httpx2, types=mcp_types)
        return _SDK


async def load_sdk() -> SimpleNamespace:
    """The SDK takes most of a second to import: do it off the GUI thread, once."""
    if _SDK is not None:
        return _SDK
    return await asyncio.to_thread(_import_sdk)


def client_version() -> str:
    try:
        from importlib.metadata import version

        return version("tebiki")
    except Exception:
        return "0"


# -- the command line -------------------------------------------------------------------------


@dataclass(frozen=True)
class StdioLaunch:
    """How a stdio server is started: what goes into ``StdioServerParameters``.

    ``confinement`` is set when it runs in the OS sandbox; ``note`` is what its status says
    about that ("sandboxed (bubblewrap)", "not sandboxed: …", or "" when it did not opt in)."""

    command: str
    args: list[str]
    cwd: str | None
    confinement: Confinement | None = None
    note: str = ""

    @property
    def sandboxed(self) -> bool:
        return self.confinement is not None


def resolve_command(command: str, env: Mapping[str, str], cwd: str | None) -> str:
    """The program the SDK would start for ``command``: a name is looked up on the server's
    PATH (the one it gets from ``env``), a path with a slash is taken relative to ``cwd``.
    Raises McpConfigError when there is no such program."""
    if os.sep in command or (os.altsep and os.altsep in command):
        path = os.path.join(cwd or os.getcwd(), os.path.expanduser(command))
        found = shutil.which(path)
    else:
        found = shutil.which(command, path=env.get("PATH", os.defpath))
    if found is None:
        raise McpConfigError([f"the command {command!r} was not found (or is not executable) "
                              "on the server's PATH"])
    return os.path.abspath(found)


def stdio_launch(config: McpServerConfig, sandbox: Sandbox, env: Mapping[str, str],
                 base_env: Mapping[str, str], default_cwd: Path | None = None) -> StdioLaunch:
    """The command line of a stdio server (``env``: its resolved config env; ``base_env``: what
    the SDK passes every server, e.g. PATH and HOME).

    It starts in its config's ``cwd``, else in ``default_cwd`` (the open project folder, so
    relative paths mean the project, not Tebiki's own folder), else in Tebiki's folder.

    A server that opts in (``"sandbox"``) runs under ``Confinement.wrap``: writable are its
    configured ``cwd`` and ``write_folders`` (plus the sandbox's private /tmp) — never the
    default folder, which the config did not grant; the network is on only when its config
    says so. Raises SandboxRequired when the sandbox is required and cannot run here,
    McpConfigError when the command cannot be found."""
    assert config.command is not None
    configured = os.path.expanduser(config.cwd) if config.cwd else None
    cwd = configured or (str(default_cwd) if default_cwd is not None and default_cwd.is_dir()
                         else None)
    args = list(config.args)
    if config.sandbox is None:
        return StdioLaunch(config.command, args, cwd)
    writable = [Path(os.path.abspath(configured))] if configured else []
    writable += [Path(os.path.expanduser(f)) for f in config.sandbox.write_folders]
    confinement = sandbox.confine(writable=writable, network=config.sandbox.network)
    if confinement is None:
        return StdioLaunch(config.command, args, cwd, note=sandbox.status.summary)
    executable = resolve_command(config.command, {**base_env, **env}, cwd)
    where = Path(os.path.abspath(cwd)) if cwd else Path.cwd()
    # The environment the SDK starts it with: the sandbox unsets sockets and unseen paths.
    program, argv = confinement.wrap([executable, *args], executable, where, {**base_env, **env})
    return StdioLaunch(program, argv[1:], cwd, confinement, confinement.status.summary)


def sandbox_hint(launch: StdioLaunch) -> str:
    """What a server that failed inside the sandbox may be missing, and where to allow it."""
    if launch.confinement is None:
        return ""
    policy = launch.confinement.policy
    where = ", ".join(str(p) for p in policy.writable) or "nowhere but a private /tmp"
    network = "on" if policy.network else "off"
    return (f" It runs in the sandbox (writes: {where}; network: {network}); if it needs more, "
            "add folders to \"write_folders\" or set \"network\": true in its \"sandbox\" "
            "entry.")


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


class WatchedReadStream:
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

    def __aiter__(self) -> WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> WatchedReadStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:  # e.g. ``last_context`` of context streams
        return getattr(self._inner, name)
