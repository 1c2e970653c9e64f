"""What a 2026-07-28 server says changed, heard through ``subscriptions/listen``.

On 2026-07-28 a server no longer sends ``notifications/tools/list_changed`` and its kin on its
own: a client asks for them with one long ``subscriptions/listen`` request whose stream carries
the changes. A server on an older revision keeps sending the notifications, which
``ServerRun._on_message`` reads; this listener is opened only for modern sessions, asks only
for what the server declared it announces, and turns each event into the same flags.

The resources Tebiki watches are followed on a stream of their own (``resource_listen``),
reopened whenever that set changes, so the list stream is never interrupted for it.

A stream that ends (gracefully or lost) is not reopened in a loop: the run goes on, and the
next start (a reconnect) listens again. Nothing here raises into the server's task.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import anyio

from app.core.tools.providers.mcp.resource_listen import listen_for_updates
from app.core.tools.providers.mcp.resource_updates import ResourceUpdates
from app.core.tools.providers.mcp.results import describe_exception
from app.core.tools.providers.mcp.revision import speaks_modern

log = logging.getLogger(__name__)


def announces(capabilities: Mapping[str, Any], kind: str) -> bool:
    entry = capabilities.get(kind)
    return isinstance(entry, Mapping) and bool(entry.get("listChanged"))


async def listen_for_changes(session: Any, capabilities: Mapping[str, Any], server: str,
                             updates: ResourceUpdates | None = None, *,
                             tools_changed: Callable[[], None],
                             resources_changed: Callable[[], None]) -> None:
    """Hear the server's list changes until the stream ends or this task is cancelled, and
    the updates of the resources ``updates`` watches (``resource_listen``) until cancelled."""
    if not speaks_modern(session):
        return
    if updates is None:
        await _listen_for_lists(session, capabilities, server, tools_changed=tools_changed,
                                resources_changed=resources_changed)
        return
    async with anyio.create_task_group() as both:
        both.start_soon(listen_for_updates, session, capabilities, updates)
        await _listen_for_lists(session, capabilities, server, tools_changed=tools_changed,
                                resources_changed=resources_changed)


async def _listen_for_lists(session: Any, capabilities: Mapping[str, Any], server: str, *,
                            tools_changed: Callable[[], None],
                            resources_changed: Callable[[], None]) -> None:
    tools = announces(capabilities, "tools")
    resources = announces(capabilities, "resources")
    if not (tools or resources):
        return
    from mcp.client.subscriptions import ResourcesListChanged, ToolsListChanged, listen

    try:
        async with listen(session, tools_list_changed=tools,
                          resources_list_changed=resources) as subscription:
            async for event in subscription:
                if isinstance(event, ToolsListChanged):
                    tools_changed()
                elif isinstance(event, ResourcesListChanged):
                    resources_changed()
    except Exception as exc:
        log.info("MCP server %s: its change stream ended: %s", server, describe_exception(exc))
