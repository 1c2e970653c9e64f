"""Streaming Markdown without quadratic re-rendering.

Re-rendering a whole growing message on every tick costs O(length) each time (300 ms for a
10,000-token answer). Instead, finished parts are frozen: complete paragraphs, or for a very
long paragraph chunks cut at a line or word boundary, are rendered once into their own label,
and only a bounded tail is re-rendered while text streams in. A code fence cut in two is closed
at the end of the frozen part and re-opened in the tail, so both render as code.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_TAIL_CHARS = 1200


@dataclass
class SplitState:
    consumed: int = 0          # characters of the source already frozen
    open_fence: str | None = None  # the fence line open at ``consumed`` (re-opened in the tail)


def _fence_marker(line: str) -> str | None:
    stripped = line.lstrip()
    for marker in ("```", "~~~"):
        if stripped.startswith(marker):
            return stripped
    return None


def freeze_ready_blocks(source: str, state: SplitState,
                        max_tail: int = MAX_TAIL_CHARS) -> tuple[list[str], str]:
    """Advance ``state`` over ``source``; return (new frozen blocks, tail text to render)."""
    frozen: list[str] = []
    while True:
        pending = source[state.consumed:]
        cut = _find_cut(pending, state.open_fence, max_tail)
        if cut is None:
            break
        length, fence_after = cut
        block = pending[:length]
        if state.open_fence:
            block = state.open_fence + "\n" + block
        if fence_after:
            block = block.rstrip("\n") + "\n" + fence_after[:3]  # close it for this block
        frozen.append(block)
        state.consumed += length
        state.open_fence = fence_after
    tail = source[state.consumed:]
    if state.open_fence:
        tail = state.open_fence + "\n" + tail
    return frozen, tail


def _find_cut(pending: str, fence: str | None, max_tail: int) -> tuple[int, str | None] | None:
    """Where the pending text can be frozen: (length, fence still open after it) or None."""
    position = 0
    last_line_cut: tuple[int, str | None] | None = None
    while True:
        newline = pending.find("\n", position)
        if newline < 0:
            break
        line = pending[position:newline]
        marker = _fence_marker(line)
        if marker is not None:
            fence = None if fence else marker
        end = newline + 1
        if fence is None and not line.strip() and end > 1:
            return end, None  # a blank line outside code: a paragraph is complete
        last_line_cut = (end, fence)
        if end > max_tail:
            return last_line_cut
        position = end
    if len(pending) > 2 * max_tail:
        if last_line_cut is not None:
            return last_line_cut
        if fence is None:
            # One enormous line: cut at a word boundary so each render stays bounded.
            space = pending.rfind(" ", 0, max_tail)
            return (space + 1 if space > 0 else max_tail), None
    return None
