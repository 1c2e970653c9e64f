"""MCP resources on the attachment tray kept current: when the server of a resource the person
attached says it was updated (``notifications/resources/updated``, or a 2026-07-28 listen
stream), the resource is read again and its chip's attachment replaced, so what is sent with
the message is the current content; the chip says "updated" with the time.

The re-read is a request on the event loop and the conversion into an attachment runs in a
worker thread: the GUI thread never waits. A re-read that fails keeps the old content on the
chip, marked stale, and says why on hover. Updates that arrive while a re-read runs are
folded into one more re-read.

Each tracked chip holds its URI on the server's ``ResourceUpdates`` (the subscription stays
while the chip does); a chip removed from the tray (× or sent) lets go of it, and the last
holder unsubscribes. ``close`` lets go of all of them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.core.agent.attachments import AttachmentError, describe, limit_error
from app.core.agent.mcp_context import resource_attachment
from app.core.tools.providers.mcp.resources import McpRequestError
from app.ui.controllers.checkpoints import loop_running
from app.ui.task_set import TaskSet

if TYPE_CHECKING:
    from collections.abc import Callable

    from app.core.tools.providers.mcp.provider import McpProvider
    from app.ui.widgets.attachments import AttachmentChip, AttachmentTray

log = logging.getLogger(__name__)


@dataclass
class _Tracked:
    chip: AttachmentChip
    provider: McpProvider
    server: str
    uri: str
    stop_listening: Callable[[], None]
    reading: asyncio.Future[None] | None = None
    again: bool = False  # an update arrived while it was being read
    stale: bool = False


class ResourceRefresh(QObject):
    """The tray's chips that came from MCP resources, re-read when their server updates them.
    ``refreshed(chip)`` is emitted after each re-read, successful or not."""

    refreshed = Signal(object)

    def __init__(self, tray: AttachmentTray) -> None:
        super().__init__(tray)
        self._tray = tray
        self._tracked: list[_Tracked] = []
        self._tasks = TaskSet("MCP resource refresh", lambda error: log.error(
            "refreshing an attached resource failed: %s", error))
        tray.changed.connect(self._drop_removed)

    def track(self, chip: AttachmentChip, provider: McpProvider, server: str,
              uri: str) -> None:
        """``chip`` holds ``server``'s resource ``uri``: follow its updates while it is on
        the tray."""
        try:
            updates = provider.queries.resource_updates(server)
        except McpRequestError:
            return  # the server left the configuration: nothing will be updated
        updates.hold(uri)
        entry = _Tracked(chip, provider, server, uri, lambda: None)
        entry.stop_listening = updates.listen(partial(self._on_update, entry))
        self._tracked.append(entry)

    def tracked_chips(self) -> list[AttachmentChip]:
        return [entry.chip for entry in self._tracked]

    def is_stale(self, chip: AttachmentChip) -> bool:
        return any(entry.stale for entry in self._tracked if entry.chip is chip)

    def close(self) -> None:
        """Let go of every tracked resource (the conversation or the panel is closing)."""
        for entry in list(self._tracked):
            self._drop(entry)

    # -- updates -------------------------------------------------------------------------------

    def _on_update(self, entry: _Tracked, uri: str) -> None:
        if uri != entry.uri or entry not in self._tracked:
            return
        if entry.reading is not None and not entry.reading.done():
            entry.again = True
            return
        entry.reading = self._tasks.run(self._reread(entry))

    async def _reread(self, entry: _Tracked) -> None:
        chip = entry.chip
        while True:
            entry.again = False
            chip.label.setText(f"{chip.name} · updating…")
            try:
                contents = await entry.provider.read_resource(entry.server, entry.uri)
                attachment = await asyncio.to_thread(resource_attachment, entry.uri, contents)
                others = [c.attachment for c in self._tray.chips
                          if c is not chip and c.attachment is not None]
                problem = limit_error(others, attachment)
                if problem is not None:
                    raise AttachmentError(problem)
            except (McpRequestError, AttachmentError) as exc:
                if entry not in self._tracked:
                    return
                self._show_stale(entry, str(exc))
            else:
                if entry not in self._tracked:
                    return
                entry.stale = False
                chip.attachment = attachment
                shown = describe(attachment.media_type, attachment.size)
                chip.label.setText(f"{chip.name} · {shown} · updated {time.strftime('%H:%M:%S')}")
                chip.setToolTip(f"{entry.uri} was updated by {entry.server}; its current "
                                "content is sent with your next message")
            self._tray.changed.emit()
            self.refreshed.emit(chip)
            if not entry.again:
                return

    def _show_stale(self, entry: _Tracked, reason: str) -> None:
        """The old content stays (it is what was attached), marked as not current."""
        entry.stale = True
        chip = entry.chip
        chip.label.setText(f"{chip.name} · ⚠ update not read, old content")
        chip.setToolTip(f"{entry.server} updated {entry.uri}, but reading it again failed: "
                        f"{reason}\nThe content attached earlier (stale) is sent unless you "
                        "remove it with ×.")

    # -- letting go ----------------------------------------------------------------------------

    def _drop_removed(self) -> None:
        """Chips taken off the tray (×, sent, cleared) let go; those set aside while a sent
        message is edited are still the tray's (still parented to it)."""
        for entry in list(self._tracked):
            try:
                gone = entry.chip.parent() is None
            except RuntimeError:  # already deleted
                gone = True
            if gone:
                self._drop(entry)

    def _drop(self, entry: _Tracked) -> None:
        self._tracked.remove(entry)
        entry.stop_listening()
        if entry.reading is not None:
            entry.reading.cancel()
        if loop_running():  # without a loop (quitting) the server goes away with its session
            self._tasks.run(entry.provider.queries.release_resource(entry.server, entry.uri))
