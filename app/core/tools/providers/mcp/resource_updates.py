"""Resource subscriptions of one server: every resource Tebiki read from it (the model's
``read_resource``, an attachment) is subscribed to (``resources/subscribe``) when the server
advertises ``resources.subscribe``, and ``notifications/resources/updated`` marks it updated
and tells the listeners (who refresh what they show), until it is read again.

Kept by the connection across runs, like its log: a restarted server has no subscriptions, so
each session subscribes afresh at the next read. Only servers on a revision before 2026-07-28
are subscribed to (there ``resources/subscribe`` is replaced by ``subscriptions/listen``:
``resource_listen.listen_for_updates`` asks for the watched URIs on that stream).

What the person keeps in view (an attached resource, the card of a read) ``hold``s its URI;
when the last holder lets go (the chip is removed, the conversation closed) it is no longer
watched, and ``release`` unsubscribes.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from app.core.tools.providers.mcp.results import describe_exception
from app.core.tools.providers.mcp.revision import speaks_modern

log = logging.getLogger(__name__)

# Told the URI of a resource the server says was updated.
UpdateListener = Callable[[str], None]


def offers_subscribe(capabilities: Mapping[str, Any]) -> bool:
    resources = capabilities.get("resources")
    return isinstance(resources, Mapping) and resources.get("subscribe") is True


class ResourceUpdates:
    """The resources of one server Tebiki watches, and which of them changed since read."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.watched: set[str] = set()
        self.updated: set[str] = set()  # updated since they were last read
        self._session: Any = None  # the session the subscriptions below were made on
        self._subscribed: set[str] = set()
        self._listeners: list[UpdateListener] = []
        self._holders: dict[str, int] = {}
        # Told whenever the watched set changes (a 2026-07-28 listen stream asks anew), and
        # the URIs the open listen stream follows (``resource_listen``).
        self.watched_changed: list[Callable[[], None]] = []
        self.listened: tuple[str, ...] = ()

    def listen(self, listener: UpdateListener) -> Callable[[], None]:
        """Call ``listener(uri)`` at each update; returns the function that stops it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners \
            else None

    def hold(self, uri: str) -> None:
        """Someone shows ``uri`` and wants to hear of its updates until ``release``."""
        self._holders[uri] = self._holders.get(uri, 0) + 1
        self._watch(uri)

    async def release(self, session: Any, uri: str) -> None:
        """One holder of ``uri`` let go: the last one unwatches it and unsubscribes (on the
        session it was subscribed on; a failure is only logged)."""
        left = self._holders.get(uri, 0) - 1
        if left > 0:
            self._holders[uri] = left
            return
        self._holders.pop(uri, None)
        self.watched.discard(uri)
        self.updated.discard(uri)
        self._tell_watched_changed()
        if uri not in self._subscribed or session is None or session is not self._session:
            return
        self._subscribed.discard(uri)
        await self._send(session.unsubscribe_resource, "unsubscribe", uri)

    def subscribed(self, uri: str) -> bool:
        """Whether ``resources/subscribe`` was sent for ``uri`` on the current session."""
        return uri in self._subscribed

    def _watch(self, uri: str) -> None:
        if uri not in self.watched:
            self.watched.add(uri)
            self._tell_watched_changed()

    def _tell_watched_changed(self) -> None:
        for tell in list(self.watched_changed):
            tell()

    async def read(self, session: Any, capabilities: Mapping[str, Any], uri: str) -> None:
        """``uri`` was just read on ``session``: it is fresh, and watched from now on. A
        refused subscription is logged: reading worked, only updates will not be heard."""
        self._watch(uri)
        self.updated.discard(uri)
        if session is not self._session:
            self._session, self._subscribed = session, set()
        if uri in self._subscribed or not offers_subscribe(capabilities) \
                or speaks_modern(session):
            return
        self._subscribed.add(uri)
        await self._send(session.subscribe_resource, "subscribe", uri)

    async def _send(self, request: Callable[[str], Awaitable[Any]], method: str,
                    uri: str) -> None:
        """``resources/subscribe`` or ``unsubscribe``; a refusal is only logged."""
        try:
            with warnings.catch_warnings():  # deprecated for 2026-07-28 only, not sent there
                warnings.filterwarnings("ignore", message=f"resources/{method} is removed")
                await request(uri)
        except Exception as exc:
            log.warning("MCP server %s: resources/%s of %s failed: %s", self.server, method,
                        uri, describe_exception(exc))

    def note_updated(self, uri: Any) -> None:
        """From ``notifications/resources/updated``: only a watched resource counts."""
        uri = str(uri)
        if uri not in self.watched:
            return
        self.updated.add(uri)
        for listener in list(self._listeners):
            try:
                listener(uri)
            except Exception:  # a broken view must not break the session
                log.exception("resource update listener failed")
