"""Who is told, while a model request streams, what is not the answer's text: a wait before
a retry (a 429's countdown) and the model's thinking as it comes. Context variables the run
sets around its request and the HTTP client reads, so no signature between them changes and
nothing heavy is imported to read them."""

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


# Each piece of the model's thinking as it streams (the whole block still comes with the turn).
thinking_listener: contextvars.ContextVar[Callable[[str], None] | None] = \
    contextvars.ContextVar("thinking_listener", default=None)


def tell_thinking(text: str) -> None:
    listener = thinking_listener.get()
    if listener is not None:
        try:
            listener(text)
        except Exception:  # a display's bug must not break the stream
            log.exception("thinking listener failed")
