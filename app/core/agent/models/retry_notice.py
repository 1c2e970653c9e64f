"""Who is told when a model request waits before a retry (a 429's countdown): a context
variable the run sets around its request and the HTTP retry loop reads, so no signature between
them changes and nothing heavy is imported to read it."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

# (seconds, why) before each retry's wait; per task (each run sets its own).
retry_listener: contextvars.ContextVar[Callable[[float, str], None] | None] = \
    contextvars.ContextVar("retry_listener", default=None)


def tell_waiting(delay: float, why: str) -> None:
    listener = retry_listener.get()
    if listener is not None:
        try:
            listener(delay, why)
        except Exception:  # a display's bug must not stop the retry
            log.exception("retry listener failed")
