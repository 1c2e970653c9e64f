"""Import the heavy, lazily used libraries once, in a worker thread, right after start-up.

The Anthropic SDK takes 1-5 s to import and holds the GIL for up to ~100 ms at a time while it
does; importing it on the first Send would stall the GUI mid-conversation. Doing it while the
person is still looking at the fresh window moves that one-time cost to where nobody waits.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time

log = logging.getLogger(__name__)

HEAVY_MODULES: tuple[str, ...] = ("anthropic", "httpx", "jsonschema", "tree_sitter_bash")


def _import_all(names: tuple[str, ...]) -> float:
    start = time.perf_counter()
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # a missing optional module must not break start-up
            log.exception("warm-up import of %s failed", name)
    return time.perf_counter() - start


async def warm_up(names: tuple[str, ...] = HEAVY_MODULES) -> float:
    """Seconds spent importing (in a worker thread)."""
    seconds = await asyncio.to_thread(_import_all, names)
    log.info("warm-up imports took %.2f s", seconds)
    return seconds
