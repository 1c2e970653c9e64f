"""One MCP server's log messages (``notifications/message``) and the level it is asked to send
them from (``logging/setLevel``).

Separate from ``mcp.server_task`` because it outlives each run: the messages of a run that
crashed are what explains it, and the level the person chose applies to every later start. The
last ``MAX_LOG_ENTRIES`` are kept (a chatty server must not grow memory without bound); the
Settings tab shows them under the server's stderr.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.core.tools.providers.mcp.results import describe_exception

log = logging.getLogger(__name__)

# MCP's levels (RFC 5424's), lowest first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
DEFAULT_LOG_LEVEL = "warning"
MAX_LOG_ENTRIES = 500
MAX_ENTRY_CHARS = 2000


@dataclass(frozen=True)
class LogEntry:
    level: str
    logger: str
    text: str
    at: float  # time.time() when it arrived

    def line(self) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(self.at))
        source = f" [{self.logger}]" if self.logger else ""
        return f"{stamp} {self.level.upper()}{source} {self.text}"


class ServerLog:
    """The last log messages of one server, and its log level. ``on_entry`` runs after each
    message (to refresh a view); a level change wakes the running session (``subscribe``),
    which sends it when the server declared the ``logging`` capability."""

    def __init__(self, level: str = DEFAULT_LOG_LEVEL,
                 on_entry: Callable[[], None] | None = None) -> None:
        self._level = level if level in LOG_LEVELS else DEFAULT_LOG_LEVEL
        self._entries: deque[LogEntry] = deque(maxlen=MAX_LOG_ENTRIES)
        self._on_entry = on_entry
        self._wakers: list[Callable[[], None]] = []
        # The level changed since it was last sent to the running session.
        self.level_pending = False

    @property
    def level(self) -> str:
        return self._level

    def set_level(self, level: str) -> None:
        """Raises ValueError for a level MCP does not define."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; one of {', '.join(LOG_LEVELS)}")
        if level == self._level:
            return
        self._level = level
        self.level_pending = True
        for wake in list(self._wakers):
            wake()

    def subscribe(self, wake: Callable[[], None]) -> Callable[[], None]:
        """Call ``wake`` when the level changes; returns the unsubscribe function."""
        self._wakers.append(wake)
        return lambda: self._wakers.remove(wake) if wake in self._wakers else None

    def note(self, params: Any) -> None:
        """One ``notifications/message``'s params (the SDK's model or a wire dict)."""
        wire = params.model_dump(mode="json") if hasattr(params, "model_dump") else params
        if not isinstance(wire, dict):
            return
        data = wire.get("data")
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        if len(text) > MAX_ENTRY_CHARS:
            text = text[:MAX_ENTRY_CHARS] + "…"
        level = str(wire.get("level") or "info")
        self._entries.append(LogEntry(level, str(wire.get("logger") or ""), text, time.time()))
        if self._on_entry is not None:
            try:
                self._on_entry()
            except Exception:
                log.exception("MCP log listener failed")

    def entries(self) -> list[LogEntry]:
        return list(self._entries)

    def text(self) -> str:
        return "\n".join(entry.line() for entry in self._entries)

    async def send_level(self, session: Any, types: Any, capabilities: dict[str, Any],
                         server: str) -> None:
        """``logging/setLevel`` with the current level, when the server declared logging.
        A server that refuses it keeps running: the failure is only logged."""
        self.level_pending = False
        if not isinstance(capabilities.get("logging"), dict):
            return
        try:
            # send_request, not session.set_logging_level: that wrapper warns on every call
            # (logging is deprecated in the newest revision, which servers here do not speak).
            await session.send_request(
                types.SetLevelRequest(params=types.SetLevelRequestParams(level=self._level)),
                types.EmptyResult)
        except Exception as exc:
            log.warning("MCP server %s: logging/setLevel %s failed: %s", server, self._level,
                        describe_exception(exc))
