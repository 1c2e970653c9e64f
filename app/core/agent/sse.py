"""A minimal Server-Sent Events decoder over an async iterator of lines.

Both providers read their streams line by line over httpx and decode events here: no object
per event, so the client costs little more per token than a raw read
(tests/bench/bench_agent_loop.py compares them), and a malformed or truncated stream becomes a
clear error of ours.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SseEvent:
    event: str | None
    data: str


async def iter_sse(lines: AsyncIterable[str]) -> AsyncIterator[SseEvent]:
    """Yield one event per blank-line-terminated block (``data:`` lines joined with newlines;
    comments and ``id:``/``retry:`` fields ignored, as we do not reconnect)."""
    event: str | None = None
    data: list[str] = []
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield SseEvent(event, "\n".join(data))
            event, data = None, []
            continue
        if line[0] == ":":
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
    if data:
        # A final event without its blank line: the caller decides whether the stream was
        # complete (Anthropic: message_stop seen; OpenAI: [DONE] or a finish_reason).
        yield SseEvent(event, "\n".join(data))
