"""Lines a stdio MCP server writes on stdout that are not JSON-RPC (banners, progress, logs).

Separate from ``mcp.connection`` because it is a logging policy, not part of a server's
lifecycle: such a line must neither flood the log (the SDK logs a full traceback for each one;
a chatty server wrote 55 MB of log in 12 s) nor pass unnoticed (it usually explains why a
server misbehaves). The first few lines of a run are logged and kept for the server's "tail",
then only a count at 10, 100, 1000… and once more when the run ends.
"""

from __future__ import annotations

import logging
from collections import deque

from app.core.tools.providers.mcp.results import describe_exception

log = logging.getLogger(__name__)

LOGGED_UNREADABLE_LINES = 3
# The first lines of a run kept for a failure's message: a server that prints only garbage and
# exits is explained by them as much as by its stderr.
KEPT_UNREADABLE_LINES = 10
_SDK_PARSE_FAILURE = "Failed to parse JSONRPC message from server"


class _DropSdkParseTracebacks(logging.Filter):
    """Drops the SDK's traceback for a line that is not JSON-RPC. The same failure also
    reaches ``McpConnection._on_message``, which knows the server and summarises it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != _SDK_PARSE_FAILURE


_SDK_STDIO_LOGGER = logging.getLogger("mcp.client.stdio")
if not any(isinstance(f, _DropSdkParseTracebacks) for f in _SDK_STDIO_LOGGER.filters):
    _SDK_STDIO_LOGGER.addFilter(_DropSdkParseTracebacks())


def is_unreadable_line(exc: Exception) -> bool:
    """Whether a transport error is a line that is not JSON-RPC (pydantic's ValueError)."""
    return isinstance(exc, ValueError) and callable(getattr(exc, "errors", None))


def unreadable_line(exc: Exception) -> str:
    """The offending stdout line (shortened) when the SDK's error carries it."""
    errors = getattr(exc, "errors", None)
    try:
        found = errors()[0].get("input") if callable(errors) else None
    except Exception:
        found = None
    text = found if isinstance(found, str) else describe_exception(exc)
    return text if len(text) <= 200 else text[:200] + "…"


class UnreadableLines:
    """The count of one run's unreadable lines; the first few go to ``events`` (the tail)."""

    def __init__(self, server: str, events: deque[str]) -> None:
        self._server = server
        self._events = events
        self.count = 0
        self._kept: list[str] = []  # the first KEPT_UNREADABLE_LINES, shortened

    def note(self, exc: Exception) -> None:
        """One line of output that is not JSON-RPC: log the first few, then count."""
        self.count += 1
        n = self.count
        if n <= KEPT_UNREADABLE_LINES:
            self._kept.append(unreadable_line(exc))
        if n <= LOGGED_UNREADABLE_LINES:
            line = unreadable_line(exc)
            self._events.append(f"not JSON-RPC: {line}")
            log.warning("MCP server %s wrote a line that is not JSON-RPC (servers must write "
                        "only protocol messages on stdout; logs belong on stderr): %r%s",
                        self._server, line,
                        "; further such lines are only counted"
                        if n == LOGGED_UNREADABLE_LINES else "")
        elif n >= 10 and str(n).strip("0") == "1":  # 10, 100, 1000…
            log.warning("MCP server %s: %d lines on stdout were not JSON-RPC so far",
                        self._server, n)

    def summarise(self) -> None:
        """At the end of a run: the total, when more were seen than logged."""
        n = self.count
        if n > LOGGED_UNREADABLE_LINES:
            log.warning("MCP server %s: %d lines on stdout were not JSON-RPC in this run "
                        "(%d logged)", self._server, n, LOGGED_UNREADABLE_LINES)

    def failure_note(self) -> str:
        """For a failed start: the lines the server printed on stdout that are not JSON-RPC
        (the first few, and how many more); "" when there were none."""
        if not self.count:
            return ""
        what = "1 line" if self.count == 1 else f"{self.count} lines"
        shown = "\n".join(f"  {line}" for line in self._kept)
        more = self.count - len(self._kept)
        return (f"\nIt printed {what} on stdout that {'is' if self.count == 1 else 'are'} not "
                f"JSON-RPC (an MCP server must write only protocol messages there):\n{shown}"
                + (f"\n  … and {more} more" if more > 0 else ""))
