"""The cards of the model's ``read_resource`` calls say when the resource changed afterwards:
what the model read is then no longer what the server has ("changed since read").

Each finished read holds its URI on the server's ``ResourceUpdates`` (subscribed when the
server offers it) while the conversation is shown; ``close`` (another conversation, the panel
going away) lets go of them all, and the last holder unsubscribes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QLabel

from app.core.tools.providers.mcp.resources import READ_RESOURCE, McpRequestError
from app.ui.controllers.checkpoints import loop_running
from app.ui.task_set import TaskSet
from app.ui.tones import Tone, tone_text

if TYPE_CHECKING:
    from app.core.services import Services
    from app.core.tools.providers.mcp.provider import McpProvider
    from app.ui.widgets.tool_card import ToolCard

log = logging.getLogger(__name__)
CHANGED_TEXT = "↻ changed since read: the model saw an earlier version"


class ReadResourceMarks:
    """Follows the resources the shown conversation's ``read_resource`` calls read."""

    def __init__(self, services: Services) -> None:
        self._services = services
        # (provider, server, uri, stop listening) per held read.
        self._held: list[tuple[McpProvider, str, str, Callable[[], None]]] = []
        self._tasks = TaskSet("read_resource marks", lambda error: log.error(
            "letting go of a read resource failed: %s", error))

    def watch(self, card: ToolCard, is_error: bool) -> None:
        """``card``'s call finished: when it read an MCP resource, mark it on change."""
        provider = self._services.mcp if self._services.tools_built else None
        uri = card.tool_input.get("uri") if isinstance(card.tool_input, dict) else None
        tool = self._services.registry.get(card.tool_name) if provider is not None else None
        if provider is None or tool is None or is_error or not isinstance(uri, str) or \
                getattr(tool, "remote_name", None) != READ_RESOURCE:
            return
        server = getattr(tool, "server", "")
        uri = uri.strip()
        try:
            updates = provider.queries.resource_updates(server)
        except McpRequestError:
            return
        updates.hold(uri)
        stop = updates.listen(partial(_mark, card, uri))
        self._held.append((provider, server, uri, stop))

    def close(self) -> None:
        for provider, server, uri, stop in self._held:
            stop()
            if loop_running():
                self._tasks.run(provider.queries.release_resource(server, uri))
        self._held.clear()


def _mark(card: Any, uri: str, updated: str) -> None:
    if updated != uri:
        return
    try:
        if card.findChild(QLabel, "resource-changed") is not None:
            return
        note = QLabel(CHANGED_TEXT)
        note.setObjectName("resource-changed")
        note.setToolTip(f"The server said {uri} was updated after this call read it.")
        tone_text(note, Tone.WARNING)
        card.layout().addWidget(note)
    except RuntimeError:  # the card is gone (its conversation was closed)
        return
