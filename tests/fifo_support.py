"""FIFOs for tests of "the host never blocks on project content".

A reader that opens a FIFO without O_NONBLOCK waits for a writer forever. Tests run the code
under test with :func:`returns_within`, in a daemon thread joined with a time limit, so a
regression fails instead of hanging; :func:`make_fifo`'s teardown then frees every reader still
stuck on its FIFOs, so the worker threads finish and the test process can exit. Code that must
run on the test's own thread (Qt) runs inside ``make_fifo.on_this_thread()`` instead.
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


class Fifos:
    """Makes FIFOs; :meth:`release` turns each into a regular file and frees its stuck readers.

    It holds a non-blocking read end of each FIFO, so that it can open the write end without
    blocking (via /proc/self/fd): that wakes every reader waiting in open(), and closing it gives
    them end-of-file. The name is replaced by an empty regular file first, so a reader that goes
    on to open it again does not block anew.
    """

    def __init__(self) -> None:
        self._held: list[tuple[Path, int]] = []

    def __call__(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
        self._held.append((path, os.open(path, os.O_RDONLY | os.O_NONBLOCK)))
        return path

    def release(self) -> None:
        held, self._held = self._held, []
        for path, read_end in held:
            with contextlib.suppress(OSError):
                spare = path.with_name(path.name + ".released")
                spare.write_bytes(b"")
                os.replace(spare, path)
            with contextlib.suppress(OSError):
                os.close(os.open(f"/proc/self/fd/{read_end}", os.O_WRONLY | os.O_NONBLOCK))
            os.close(read_end)

    @contextlib.contextmanager
    def on_this_thread(self, seconds: float = FIFO_TIMEOUT) -> Iterator[None]:
        """For code that must run on this (the GUI) thread: if the block has not ended after
        ``seconds``, a watchdog releases the FIFOs (so the block ends) and the test fails."""
        done = threading.Event()
        fired = threading.Event()

        def watch() -> None:
            if not done.wait(seconds):
                fired.set()
                self.release()

        watchdog = threading.Thread(target=watch, name="fifo-watchdog", daemon=True)
        watchdog.start()
        try:
            yield
        finally:
            done.set()
            watchdog.join()
        if fired.is_set():
            pytest.fail(f"blocked for {seconds:g} s on a FIFO (freed by the test's watchdog)")


@pytest.fixture
def make_fifo() -> Iterator[Fifos]:
    fifos = Fifos()
    yield fifos
    fifos.release()
