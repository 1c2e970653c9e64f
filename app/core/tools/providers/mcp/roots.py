"""MCP roots: the folders a server may work in, answered to ``roots/list``.

Tebiki's root is the open project folder. One ``McpRoots`` is shared by every connection of a
provider: each session answers ``roots/list`` from it (so a server always sees the current
folder), and when the project changes each running session sends
``notifications/roots/list_changed`` so servers that cache roots (server-filesystem) ask again,
and stdio servers that started in the old project folder restart in the new one
(``mcp.project_follow``).
Advertising the capability is the SDK's doing: it adds ``roots`` to the client capabilities
when a ``list_roots_callback`` is given.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

RootsListener = Callable[[], None]


class McpRoots:
    """The current roots (absolute folders), with listeners told when they change."""

    def __init__(self, folders: Iterable[Path] = ()) -> None:
        self._folders = _normalise(folders)
        # Each listener runs on the loop it subscribed from (None: in the caller's thread).
        self._listeners: list[tuple[RootsListener, asyncio.AbstractEventLoop | None]] = []

    @property
    def folders(self) -> list[Path]:
        return list(self._folders)

    @property
    def first(self) -> Path | None:
        """The folder stdio servers start in when their config sets no ``cwd``."""
        return self._folders[0] if self._folders else None

    def set(self, folders: Iterable[Path]) -> bool:
        """Replace the roots; True (and listeners told) when they changed. Callable from any
        thread (the app sets the project where its services are built): a listener that
        subscribed on an event loop is run on that loop."""
        fresh = _normalise(folders)
        if fresh == self._folders:
            return False
        self._folders = fresh
        try:
            here: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        for listener, loop in list(self._listeners):
            if loop is not None and loop is not here:
                if not loop.is_closed():
                    loop.call_soon_threadsafe(_run, listener)
            else:
                _run(listener)
        return True

    def subscribe(self, listener: RootsListener) -> Callable[[], None]:
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        entry = (listener, loop)
        self._listeners.append(entry)

        def unsubscribe() -> None:
            if entry in self._listeners:
                self._listeners.remove(entry)

        return unsubscribe

    def wire(self) -> list[dict[str, str]]:
        """The ``roots`` of a ``roots/list`` answer: ``file://`` URIs with the folder's name."""
        return [{"uri": folder.as_uri(), "name": folder.name or str(folder)}
                for folder in self._folders]

    def list_roots_callback(self, types: Any) -> Callable[..., Any]:
        """The SDK's ``list_roots_callback``: answers from the roots current at each request."""

        async def list_roots(_context: Any) -> Any:
            return types.ListRootsResult.model_validate({"roots": self.wire()})

        return list_roots


def _run(listener: RootsListener) -> None:
    try:
        listener()
    except Exception:
        log.exception("MCP roots listener failed")


def _normalise(folders: Iterable[Path]) -> list[Path]:
    seen: list[Path] = []
    for folder in folders:
        path = Path(folder).expanduser().absolute()
        if path not in seen:
            seen.append(path)
    return seen
