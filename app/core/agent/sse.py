"""A minimal Server-Sent Events decoder over an async iterator of lines.

Both providers read their streams line by line over httpx and decode events here: no object
per event, so the client costs little more per token than a raw read
(tests/bench/bench_agent_loop.py compares them), and a malformed or truncated stream becomes a
clear error of ours.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

from app.core.agent.models.base import MalformedStream

# The longest line a stream may send. Real events are small (a text delta, a piece of tool
# input); without a bound, a server (or whatever a wrong base URL points at) sending one
# endless line would have it buffered until memory ran out.
MAX_LINE_CHARS = 8 * 1024 * 1024


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


async def bounded_lines(text: AsyncIterable[str], label: str,
                        max_chars: int | None = None) -> AsyncIterator[str]:
    """The lines of a streamed text body (ended by ``\\n``, ``\\r\\n`` or ``\\r``, as SSE
    allows), refusing a line longer than ``max_chars`` (``MAX_LINE_CHARS``) with
    MalformedStream instead of buffering it. A partial line is kept as a list of pieces, so a
    long one costs linear time however small the chunks."""
    limit = MAX_LINE_CHARS if max_chars is None else max_chars
    partial: list[str] = []  # the pieces of the line not ended yet
    size = 0
    after_cr = False  # the last chunk ended with \r: a \n starting the next one belongs to it
    async for chunk in text:
        if not chunk:
            continue
        if after_cr and chunk[0] == "\n":
            chunk = chunk[1:]
        if "\r" in chunk:
            after_cr = chunk.endswith("\r")
            chunk = chunk.replace("\r\n", "\n").replace("\r", "\n")
        else:
            after_cr = False
        lines = chunk.split("\n")
        rest = lines.pop()  # after the last line end: the start of the next line
        if lines:
            if partial:
                partial.append(lines[0])
                lines[0] = "".join(partial)
                partial.clear()
                size = 0
            for line in lines:
                if len(line) > limit:
                    raise _too_long(label, limit)
                yield line
        if rest:
            partial.append(rest)
            size += len(rest)
            if size > limit:
                raise _too_long(label, limit)
    if partial:
        yield "".join(partial)


def _too_long(label: str, limit: int) -> MalformedStream:
    return MalformedStream(f"{label} sent a stream line longer than {limit:,} characters, "
                           "which no API event is; check the base URL. Retry.")
