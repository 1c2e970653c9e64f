"""Database work off the GUI thread, answered on it.

``DatabaseWorker.submit(work, done, failed)`` runs ``work`` on one shared worker thread (so
calls run in submission order: a write, then the read that shows it) and calls ``done(result)``
or ``failed(exception)`` on the GUI thread through a queued signal. The callbacks stay on the
GUI side, keyed by a number: the worker thread holds no reference to the widget that asked, so
it can never be the thread that drops (and frees) a Qt object. An answer that arrives after the
owner was destroyed is dropped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from PySide6.QtCore import QObject, Signal

log = logging.getLogger(__name__)

_executor: ThreadPoolExecutor | None = None
_executor_guard = threading.Lock()


def _shared_executor() -> ThreadPoolExecutor:
    global _executor
    with _executor_guard:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tebiki-ui-db")
        return _executor


class DatabaseWorker(QObject):
    _answered = Signal(int, object, object)  # token, result, error

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._token = 0
        self._waiting: dict[int, tuple[Callable[[Any], None],
                                       Callable[[BaseException], None]]] = {}
        self._answered.connect(self._deliver)

    def submit(self, work: Callable[[], Any], done: Callable[[Any], None],
               failed: Callable[[BaseException], None]) -> None:
        """Run ``work`` (which must hold no Qt object) off the GUI thread."""
        self._token += 1
        token = self._token
        self._waiting[token] = (done, failed)
        answered = self._answered

        def run() -> None:
            try:
                result, error = work(), None
            except Exception as exc:  # handed to ``failed`` on the GUI thread
                log.warning("database work failed: %s", exc)
                result, error = None, exc
            try:
                answered.emit(token, result, error)
            except RuntimeError:  # the owner was destroyed meanwhile: nobody to tell
                pass

        _shared_executor().submit(run)

    def _deliver(self, token: int, result: object, error: object) -> None:
        callbacks = self._waiting.pop(token, None)
        if callbacks is None:
            return
        done, failed = callbacks
        if isinstance(error, BaseException):
            failed(error)
        else:
            done(result)
