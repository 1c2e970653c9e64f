"""When a stdio server that crashed is started again: at the next call, after a backoff.

A stdio server that exits while running (a crash, an out-of-memory kill) used to stay failed
until the person restarted it in Settings, so every later call of its tools failed. Now the next
call restarts it, but not at once after every crash: the first restart waits 1 s after the
crash, each further one twice as long (capped at 30 s), and a server that then ran for a healthy
while (60 s) starts counting afresh. A restart that fails leaves the server failed; the next call
tries again after the next delay. The call that was running when the server died is never sent
again (it may have run).

Separate from ``mcp.connection`` because it is a policy with its own state that outlives each
run; ``McpConnection.reconnect`` applies it, and ``McpReconnectingCalls`` decides when.
"""

from __future__ import annotations

import time
from collections.abc import Callable

FIRST_DELAY_S = 1.0
MAX_DELAY_S = 30.0
# A run this long before its crash was healthy: the next restart waits the first delay again.
HEALTHY_RUN_S = 60.0


class CrashRestarts:
    """The backoff of one server's restarts after crashes."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.attempts = 0  # restarts since the server last ran for a healthy while
        # The last restart after a crash failed: the server is due another at the next call.
        self.pending = False
        self._failed_at = 0.0

    def wait_s(self, ran_from: float | None, ended_at: float | None) -> float:
        """How long to wait before the next restart, given when the crashed run started and
        ended (None, None after a failed restart: counted from that failure)."""
        if ran_from is not None and ended_at is not None:
            if ended_at - ran_from >= HEALTHY_RUN_S:
                self.attempts = 0
            down_since = ended_at
        else:
            down_since = self._failed_at
        delay = min(FIRST_DELAY_S * 2.0 ** self.attempts, MAX_DELAY_S)
        return max(0.0, down_since + delay - self._clock())

    def restarted(self, running: bool) -> None:
        """A restart after a crash has ended; ``running``: the server runs again."""
        self.attempts += 1
        self.pending = not running
        self._failed_at = self._clock()
