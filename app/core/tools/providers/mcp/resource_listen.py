"""Resource updates from a 2026-07-28 server, heard through ``subscriptions/listen``.

That revision has no ``resources/subscribe``: a client names the resources it follows in the
``resourceSubscriptions`` of a listen stream, and the server sends their
``notifications/resources/updated`` on it. The URIs are fixed when the stream opens, so
whenever the watched set of ``ResourceUpdates`` changes (a resource read or attached, a chip
removed) a stream with the new set is opened *before* the old one is closed: no update falls
into the gap. With nothing watched, no stream is open.

The stream's events are only drained here: the SDK also hands every notification of a stream
to the session's message handler, where ``ServerRun`` tells ``ResourceUpdates.note_updated``
as it does for the older revisions' subscriptions (one path, heard once).

Only for a modern session whose server offers ``resources.subscribe``. A stream that ends (the
server closed it, or it was lost) is not reopened in a loop: the next change of the watched set
opens another. Nothing here raises into the server's task.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio

from app.core.tools.providers.mcp.resource_updates import ResourceUpdates, offers_subscribe
from app.core.tools.providers.mcp.results import describe_exception
from app.core.tools.providers.mcp.revision import speaks_modern

log = logging.getLogger(__name__)


async def listen_for_updates(session: Any, capabilities: Mapping[str, Any],
                             updates: ResourceUpdates) -> None:
    """Follow the watched resources' updates until this task is cancelled."""
    if not speaks_modern(session) or not offers_subscribe(capabilities):
        return
    wake = [anyio.Event()]

    def watched_changed() -> None:
        wake[0].set()

    updates.watched_changed.append(watched_changed)
    open_stream: anyio.Event | None = None  # set to close the stream now open
    try:
        async with anyio.create_task_group() as streams:
            while True:
                uris = tuple(sorted(updates.watched))
                if uris != updates.listened:
                    closing, open_stream = open_stream, None
                    if uris:
                        open_stream = anyio.Event()
                        opened = anyio.Event()
                        streams.start_soon(_stream, session, uris, updates, opened,
                                           open_stream)
                        await opened.wait()
                    if closing is not None:
                        closing.set()
                    if not uris:
                        updates.listened = ()
                await wake[0].wait()
                wake[0] = anyio.Event()
    finally:
        updates.watched_changed.remove(watched_changed)


async def _stream(session: Any, uris: tuple[str, ...], updates: ResourceUpdates,
                  opened: anyio.Event, close: anyio.Event) -> None:
    """One listen stream for ``uris``: ``opened`` once the server acknowledged it (or it
    failed), until ``close`` is set or the stream ends."""
    from mcp.client.subscriptions import listen

    try:
        async with listen(session, resource_subscriptions=uris) as subscription:
            updates.listened = uris
            opened.set()
            async with anyio.create_task_group() as reading:
                async def read() -> None:
                    async for _event in subscription:
                        pass  # heard through the session's message handler (see above)
                    close.set()  # the server ended the stream

                reading.start_soon(read)
                await close.wait()
                reading.cancel_scope.cancel()
    except Exception as exc:
        log.info("MCP server %s: the resource update stream ended: %s", updates.server,
                 describe_exception(exc))
    finally:
        opened.set()
        if updates.listened == uris:  # no newer stream took over: nothing is heard now
            updates.listened = ()
