"""Stdio servers follow the open project: a server started in the project's folder (its config
sets no ``cwd``) is restarted in the new folder when the person opens another project.

Why restart and not only tell it: a server resolves relative paths against its working folder,
which cannot change from outside the process. A filesystem or git server left in the old folder
would keep working on the old project, and the model would edit the wrong repository. Telling
it the roots changed (``roots/list_changed``, which every server still gets) is not enough.

What is left alone: servers with a configured ``cwd`` (the person chose the folder), HTTP
servers (no process of ours; they only get ``roots/list_changed``), servers that are not running
(their next start uses the current project anyway), and a project opened again (the roots did
not change, or the server already runs in that folder).

Calls are never cut off: the restart waits until the calls in flight on the server have
finished (each is bounded by its own timeout, and Stop cancels it). Calls that arrive once the
restart is due wait for it and then run on the restarted server — never on the old folder's
process; when the restart failed they get the usual "server not running" error. Restarting goes
through ``McpConnection.restart``, so the status shows stopped → starting → running as for any
restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.roots import McpRoots
from app.core.tools.providers.mcp.transport import StdioLaunch

log = logging.getLogger(__name__)

WAITING_NOTE = "restarts in the new project folder once its running tool calls finish"


def project_start_folder(first_root: Path | None) -> str | None:
    """Where a stdio server without a configured ``cwd`` starts now (None: Tebiki's own
    folder); the same rule as ``mcp.transport.stdio_launch``."""
    return str(first_root) if first_root is not None and first_root.is_dir() else None


class FollowingServer(Protocol):
    """What following the project needs of a server's connection (``McpConnection``)."""

    @property
    def name(self) -> str: ...

    @property
    def config(self) -> McpServerConfig: ...

    @property
    def roots(self) -> McpRoots: ...

    @property
    def launch(self) -> StdioLaunch | None:
        """How its current run was started."""
        ...

    @property
    def running(self) -> bool: ...

    @property
    def stopping(self) -> bool: ...

    @property
    def message(self) -> str: ...

    def show_message(self, message: str) -> None:
        """A new status message, same state."""
        ...

    async def restart(self) -> None: ...


def runs_in_old_project(conn: FollowingServer) -> bool:
    """Whether ``conn`` is a running stdio server that follows the project and was started in
    another folder than the one it would start in now."""
    launch = conn.launch
    return (conn.config.transport == "stdio" and not conn.config.cwd and launch is not None
            and conn.running and not conn.stopping
            and launch.cwd != project_start_folder(conn.roots.first))


class ProjectFollower:
    """Counts one connection's calls in flight and restarts it when the project moved."""

    def __init__(self, conn: FollowingServer) -> None:
        self._conn = conn
        self._calls = 0
        self._no_calls = asyncio.Event()
        self._no_calls.set()
        self._move: asyncio.Future[None] | None = None  # the restart that is due, if any

    @property
    def moving(self) -> bool:
        """A restart into the new project folder is due or under way."""
        return self._move is not None

    def check(self) -> None:
        """The project may have changed (roots changed, or a run just reached "running" with
        a folder chosen before a change): schedule the restart when it is needed. Call it
        from the connection's event loop."""
        if self._move is not None or not runs_in_old_project(self._conn):
            return
        before = self._conn.message
        if self._calls:
            self._conn.show_message(f"{before}; {WAITING_NOTE}")
        self._move = asyncio.ensure_future(self._restart_when_idle(before))

    async def settled(self) -> None:
        """Return once no restart is due (a caller that gives up waiting, e.g. Stop, does not
        cancel the restart)."""
        while self._move is not None:
            await asyncio.shield(self._move)

    @contextlib.contextmanager
    def counted_call(self) -> Iterator[None]:
        """Around one call on the server: the restart waits until every such call ended."""
        self._calls += 1
        self._no_calls.clear()
        try:
            yield
        finally:
            self._calls -= 1
            if not self._calls:
                self._no_calls.set()

    async def _restart_when_idle(self, message_before: str) -> None:
        try:
            while self._calls:
                await self._no_calls.wait()
            # Checked again: meanwhile the server may have died, been stopped or replaced, or
            # the person may have gone back to the project it runs in.
            if runs_in_old_project(self._conn):
                log.info("MCP server %s: restarting in the new project folder", self._conn.name)
                await self._conn.restart()
            elif self._conn.message.endswith(WAITING_NOTE):
                self._conn.show_message(message_before)  # no restart after all
        except Exception:
            log.exception("MCP server %s: restarting in the new project folder failed",
                          self._conn.name)
        finally:
            self._move = None
        # The project may have changed again while the server restarted (after its folder
        # was chosen): the new run would then be in the wrong folder too.
        self.check()
