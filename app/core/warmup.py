"""Import the heavy, lazily used libraries in a worker thread, once, before they are needed.

Start-up imports only what the window needs. The model client and its HTTP stack, the web
tools' libraries and the JSON-schema validator are loaded when a person starts writing
a request (or, at the latest, by the first run), in a worker thread, so the GUI never waits on
an import.

Two details make that stall-free:

- Python's cyclic collector must not run in the importing thread. A collection holds the GIL
  for its whole duration (~90 ms over a large library's objects), so the GUI thread would
  stop. The app collects only on the GUI thread (``app.ui.gc_guard``); automatic collection is off.
- Everything an import creates (modules, classes, functions) lives as long as the process.
  ``gc.freeze()`` moves it out of the collector's generations, so later full collections walk
  only the app's own objects: ~140 ms per full collection after a large import without it,
  a fraction of a millisecond with it. While an import is under way (``importing()``) the GUI
  thread's collector waits: collecting the half-imported objects cost 14-26 ms a time.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import logging
import sys
import threading
import time
from collections.abc import Iterator

log = logging.getLogger(__name__)

# What a run needs that start-up does not import, apart from the tool modules' own
# ``WARMUP_IMPORTS`` (app.core.tools.builtin): the model client (httpx), tool-input
# validation for tools without typed params (MCP, custom), and the libraries of helpers several
# tools share: the shell parser (app.core.tools.shell.syntax), .gitignore matching.
BASE_RUN_MODULES: tuple[str, ...] = (
    "app.core.agent.models.anthropic",
    "jsonschema",
    "tree_sitter",
    "tree_sitter_bash",
    "pathspec",
    # The transcript's code colours (app/ui/widgets/code_colouring.py): the lexers load by name.
    "pygments.lexers",
    "pygments.styles",
)


@functools.cache
def run_modules() -> tuple[str, ...]:
    """Everything a run needs that start-up does not import: the base list and the tools'."""
    # Imported here, not at the top: start-up imports this module before the tools load.
    from app.core.tools.builtin import warmup_imports

    return tuple(dict.fromkeys((*BASE_RUN_MODULES, *warmup_imports())))


def __getattr__(name: str) -> object:
    # ``RUN_MODULES`` is computed on first use: the tool modules that declare part of it
    # import this module, so it cannot be built while this module loads.
    if name == "RUN_MODULES":
        return run_modules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_lock = threading.Lock()


def keep_httpx_cli_out() -> None:
    """Stop ``import httpx`` from loading httpx's command-line client.

    httpx imports ``httpx._main`` when click, rich and pygments are installed (sqlite-utils
    brings click): 18 MB and 0.1-0.5 s here, for a ``httpx`` command the app never runs. A
    ``None`` entry in ``sys.modules`` makes that import fail, and httpx then defines a stub
    ``main`` instead (its own fallback). No effect once httpx is imported."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


def import_all(names: tuple[str, ...]) -> float:
    """Import ``names`` (missing ones are logged, not raised); freeze what they created.
    Returns the seconds spent."""
    start = time.perf_counter()
    keep_httpx_cli_out()
    with _lock:  # two warm-ups never import the same package at once
        before = len(sys.modules)
        for name in names:
            if name in sys.modules:
                continue
            try:
                importlib.import_module(name)
            except Exception:  # a missing optional module must not break the app
                log.exception("warm-up import of %s failed", name)
        if len(sys.modules) > before:
            gc.freeze()
            release_free_memory()
    return time.perf_counter() - start


@contextlib.contextmanager
def holding_imports() -> Iterator[None]:
    """Run a block that imports (e.g. building the tools) as ``import_all`` does: one at a
    time, the GUI thread's collector waiting, and what it imported frozen afterwards."""
    with _lock:
        before = len(sys.modules)
        try:
            yield
        finally:
            if len(sys.modules) > before:
                gc.freeze()


def release_free_memory() -> None:
    """Give the C heap's free pages back to the system, in a thread of its own (glibc only;
    elsewhere nothing). glibc keeps what was freed for reuse: after the warm-up's imports or a
    long streamed answer that is a few MB of resident memory nothing uses. The call releases
    the GIL, so the GUI does not wait for it."""
    def trim() -> None:
        try:
            import ctypes

            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # not glibc
            pass

    if sys.platform.startswith("linux"):
        threading.Thread(target=trim, daemon=True, name="tebiki-trim").start()


def importing() -> bool:
    """True while ``import_all`` runs (in any thread)."""
    return _lock.locked()


async def warm_up(names: tuple[str, ...] | None = None) -> float:
    """Import ``names`` (default: ``run_modules()``) in a worker thread; returns the seconds
    spent."""
    import asyncio  # not at the top: start-up imports this module before it needs asyncio

    if names is None:
        names = run_modules()
    if all(name in sys.modules for name in names):
        return 0.0
    seconds = await asyncio.to_thread(import_all, names)
    log.info("warm-up imports took %.2f s", seconds)
    return seconds
