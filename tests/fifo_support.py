"""FIFOs for tests of "the host never blocks on project content".

A reader that opens a FIFO without O_NONBLOCK waits for a writer forever. Tests run the code
under test with :func:`returns_within`, in a daemon thread joined with a time limit, so a
regression fails instead of hanging; :func:`make_fifo`'s teardown then frees every reader still
stuck on its FIFOs, so the worker threads finish and the test process can exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

FIFO_TIMEOUT = 10.0  # seconds; the safe code returns in milliseconds

T = TypeVar("T")


def returns_within(work: Callable[[], T], seconds: float = FIFO_TIMEOUT) -> T:
    """``work()``'s result, or a test failure if it has not returned after ``seconds``."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the test thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="fifo-bounded", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"did not return within {seconds:g} s: it blocked on a FIFO")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]


def runs_within(make: Callable[[], Coroutine[Any, Any, T]], seconds: float = FIFO_TIMEOUT) -> T:
    """A coroutine run on its own event loop by :func:`returns_within`."""
    return returns_within(lambda: asyncio.run(make()), seconds)


@pytest.fixture
def make_fifo() -> Iterator[Callable[[Path], Path]]:
    """Makes FIFOs; at teardown each becomes a regular file and its stuck readers are freed.

    The fixture holds a non-blocking read end of each FIFO, so that at teardown it can open the
    write end without blocking (via /proc/self/fd): that wakes every reader waiting in open(),
    and closing it gives them end-of-file. The name is replaced by an empty regular file first,
    so a reader that goes on to open it again does not block anew.
    """
    held: list[tuple[Path, int]] = []

    def make(path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
        held.append((path, os.open(path, os.O_RDONLY | os.O_NONBLOCK)))
        return path

    yield make
    for path, read_end in held:
        with contextlib.suppress(OSError):
            spare = path.with_name(path.name + ".released")
            spare.write_bytes(b"")
            os.replace(spare, path)
        with contextlib.suppress(OSError):
            os.close(os.open(f"/proc/self/fd/{read_end}", os.O_WRONLY | os.O_NONBLOCK))
        os.close(read_end)
