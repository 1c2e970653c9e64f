"""The application log: a bounded, rotating file, with floods of one record collapsed (no Qt).

Why: the log once grew without bound. An MCP server that prints non-JSON lines, or an error
in a tight loop, logs the same record thousands of times a second, each with a traceback, and
fills the disk. Two defences:

- ``RotatingLogFile``: at most ``MAX_BYTES`` per file and ``BACKUP_COUNT`` old files.
- ``CollapsingHandler``: records with the same logger, level, message template (``msg`` before
  its ``%`` arguments are applied) and exception type are a flood. The first one is written;
  the repeats inside the window are counted, not written, and one line says how many were
  collapsed ("… repeated N times") when the window ends, when the next such record comes, or
  when logging shuts down. While the flood lasts the window doubles (up to ``MAX_WINDOW_S``),
  so a loop that never stops writes a few lines an hour rather than one every few seconds.
  Different records pass through untouched.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BACKUP_COUNT",
    "LOG_FORMAT",
    "MAX_BYTES",
    "CollapsingHandler",
    "RotatingLogFile",
    "configure_logging",
]

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
MAX_BYTES = 5 * 1024 * 1024
BACKUP_COUNT = 3
WINDOW_S = 10.0
MAX_WINDOW_S = 600.0
# Distinct floods tracked at once; the least recent beyond this is summarised and dropped,
# so a stream of ever-new messages cannot grow the table.
MAX_KEYS = 512
# Expired windows of other keys are looked for at most this often (not on every record).
SWEEP_S = 1.0

_Key = tuple[str, int, str, str]


@dataclass
class _Flood:
    started: float
    window: float
    repeats: int = 0
    template: str = ""
    exc_name: str = ""


def _key(record: logging.LogRecord) -> _Key:
    exc = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
    msg = record.msg if isinstance(record.msg, str) else f"{type(record.msg).__name__}:{record.msg}"
    return (record.name, record.levelno, msg, exc)


class CollapsingHandler(logging.Handler):
    """Passes records on to ``targets``, collapsing repeats of one record (see the module)."""

    def __init__(self, targets: Sequence[logging.Handler], *, window_s: float = WINDOW_S,
                 max_window_s: float = MAX_WINDOW_S, max_keys: int = MAX_KEYS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.targets = list(targets)
        self.window_s = window_s
        self.max_window_s = max(window_s, max_window_s)
        self.max_keys = max_keys
        self.clock = clock
        self._floods: OrderedDict[_Key, _Flood] = OrderedDict()
        self._next_sweep = 0.0
        self.collapsed_total = 0

    # Handler.handle() holds self.lock around emit(), so the table needs no lock of its own.
    def emit(self, record: logging.LogRecord) -> None:
        try:
            now = self.clock()
            key = _key(record)
            flood = self._floods.get(key)
            if flood is not None and now - flood.started < flood.window:
                flood.repeats += 1
                self.collapsed_total += 1
                self._floods.move_to_end(key)
                return
            window = self.window_s
            if flood is not None:
                # The window ended and the record is back: say what was collapsed, and keep a
                # lasting flood quieter by widening the next window.
                if flood.repeats:
                    self._summarise(key, flood, now)
                    window = min(flood.window * 2, self.max_window_s)
                del self._floods[key]
            self._floods[key] = _Flood(now, window, template=key[2], exc_name=key[3])
            self._forward(record)
            if now >= self._next_sweep:
                self._sweep(now)
            while len(self._floods) > self.max_keys:
                old_key, old = self._floods.popitem(last=False)
                if old.repeats:
                    self._summarise(old_key, old, now)
        except Exception:  # a logging failure must never take the app down
            self.handleError(record)

    def _forward(self, record: logging.LogRecord) -> None:
        for target in self.targets:
            if record.levelno >= target.level:
                target.handle(record)

    def _summarise(self, key: _Key, flood: _Flood, now: float) -> None:
        name, level, template, exc_name = key
        first_line = template.splitlines()[0] if template else ""
        if len(first_line) > 200:
            first_line = first_line[:200] + "…"
        what = f"{first_line!r}" + (f" ({exc_name})" if exc_name else "")
        summary = logging.makeLogRecord({
            "name": name, "levelno": level, "levelname": logging.getLevelName(level),
            "msg": "… repeated %d times in %.0f s, collapsed: %s",
            "args": (flood.repeats, max(now - flood.started, 0.0), what),
        })
        flood.repeats = 0
        self._forward(summary)

    def _sweep(self, now: float) -> None:
        self._next_sweep = now + SWEEP_S
        for key, flood in list(self._floods.items()):
            if now - flood.started >= flood.window:
                if flood.repeats:
                    self._summarise(key, flood, now)
                    # Still flooding, probably: the next occurrence starts a wider window.
                    flood.started, flood.window = now, min(flood.window * 2, self.max_window_s)
                else:
                    del self._floods[key]

    def flush(self) -> None:
        """Write what was collapsed so far (logging.shutdown calls this before close)."""
        self.acquire()
        try:
            now = self.clock()
            for key, flood in list(self._floods.items()):
                if flood.repeats:
                    self._summarise(key, flood, now)
            for target in self.targets:
                target.flush()
        finally:
            self.release()

    def close(self) -> None:
        self.flush()
        for target in self.targets:
            target.close()
        super().close()


class RotatingLogFile(logging.FileHandler):
    """The log file up to ``max_bytes``; then it becomes ``<name>.1``, the older ones move up to
    ``<name>.<backup_count>`` (at least one is kept) and the oldest is dropped: the rule of the
    standard library's ``RotatingFileHandler``, whose module imports socket, pickle and queue
    (~8 ms of start-up before the window shows)."""

    def __init__(self, path: Path, *, max_bytes: int, backup_count: int) -> None:
        super().__init__(path, mode="a", encoding="utf-8")
        self.max_bytes = max_bytes
        self.backup_count = max(1, backup_count)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if self._would_overflow(record):
                self._rotate()
        except Exception:  # a full disk, a renamed folder: said on stderr, never raised
            self.handleError(record)
            return
        super().emit(record)

    def _would_overflow(self, record: logging.LogRecord) -> bool:
        if self.max_bytes <= 0 or not os.path.isfile(self.baseFilename):  # /dev/null, say
            return False
        if self.stream is None:
            self.stream = self._open()
        line = (self.format(record) + self.terminator).encode("utf-8")
        return self.stream.tell() > 0 and self.stream.tell() + len(line) > self.max_bytes

    def _rotate(self) -> None:
        if self.stream is not None:
            self.stream.close()
            self.stream = None  # reopened below
        for index in range(self.backup_count - 1, 0, -1):
            older = f"{self.baseFilename}.{index}"
            if os.path.exists(older):
                os.replace(older, f"{self.baseFilename}.{index + 1}")
        os.replace(self.baseFilename, f"{self.baseFilename}.1")
        self.stream = self._open()


def configure_logging(log_file: Path, *, level: int = logging.INFO,
                      max_bytes: int = MAX_BYTES, backup_count: int = BACKUP_COUNT,
                      window_s: float = WINDOW_S, stream: bool = True) -> CollapsingHandler:
    """Root logging to a rotating ``log_file`` (and stderr), floods collapsed. Returns the
    collapsing handler (tests flush or close it)."""
    formatter = logging.Formatter(LOG_FORMAT)
    targets: list[logging.Handler] = [RotatingLogFile(log_file, max_bytes=max_bytes,
                                                      backup_count=backup_count)]
    if stream:
        targets.append(logging.StreamHandler(sys.stderr))
    for target in targets:
        target.setFormatter(formatter)
    handler = CollapsingHandler(targets, window_s=window_s)
    # Added directly, not through basicConfig, which does nothing when the root logger already
    # has a handler (a test runner's, say) and would leave the file unbounded.
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, CollapsingHandler)]:
        root.removeHandler(old)  # configured again (a second main() in one process)
        old.close()
    root.setLevel(level)
    root.addHandler(handler)
    return handler
