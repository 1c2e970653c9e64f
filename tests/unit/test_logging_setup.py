"""The log file is bounded: it rotates, and floods of one record are collapsed to a count."""

from __future__ import annotations

import logging
import logging.handlers
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.logging_setup import CollapsingHandler, RotatingLogFile, configure_logging


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def flood_logger() -> Iterator[logging.Logger]:
    # Outside the logger tree: only the handler under test sees these records (pytest's
    # capture handlers, which format every traceback, would make the flood test take minutes).
    logger = logging.Logger("tebiki.test.flood", logging.DEBUG)
    yield logger
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()


def _file_handler(path: Path, **kw: object) -> logging.Handler:
    handler = logging.handlers.RotatingFileHandler(path, encoding="utf-8", **kw)  # type: ignore[arg-type]
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    return handler


def _boom(i: int) -> None:
    raise ValueError(f"bad line {i}: not JSON")


def test_a_flood_of_identical_errors_stays_small_and_is_counted(tmp_path, flood_logger):
    log_file = tmp_path / "tebiki.log"
    clock = Clock()
    handler = CollapsingHandler([_file_handler(log_file)], clock=clock)
    flood_logger.addHandler(handler)
    for i in range(100_000):
        clock.now += 0.00005  # 100,000 in 5 s: inside one 10 s window
        try:
            _boom(i)
        except ValueError:
            flood_logger.exception("MCP server %s printed a non-JSON line", "srv")
    handler.flush()
    text = log_file.read_text(encoding="utf-8")
    assert log_file.stat().st_size < 10 * 1024  # 100,000 tracebacks would be ~30 MB
    assert text.count("Traceback (most recent call last)") == 1
    assert "ValueError: bad line 0: not JSON" in text
    assert ("ERROR tebiki.test.flood: … repeated 99999 times in 5 s, collapsed: "
            "'MCP server %s printed a non-JSON line' (ValueError)") in text


def test_the_summary_names_the_exact_count(tmp_path, flood_logger):
    log_file = tmp_path / "tebiki.log"
    clock = Clock()
    handler = CollapsingHandler([_file_handler(log_file)], window_s=10.0, clock=clock)
    flood_logger.addHandler(handler)
    for _ in range(1000):
        flood_logger.error("tight loop failed")
    clock.now += 11  # the window ends; the record comes back
    flood_logger.error("tight loop failed")
    lines = log_file.read_text(encoding="utf-8").splitlines()
    assert lines == [
        "ERROR tebiki.test.flood: tight loop failed",
        "ERROR tebiki.test.flood: … repeated 999 times in 11 s, collapsed: 'tight loop failed'",
        "ERROR tebiki.test.flood: tight loop failed",
    ]


def test_different_messages_are_all_kept(tmp_path, flood_logger):
    log_file = tmp_path / "tebiki.log"
    handler = CollapsingHandler([_file_handler(log_file)])
    flood_logger.addHandler(handler)
    for i in range(500):
        flood_logger.warning(f"event number {i}")  # a distinct template each time
    flood_logger.warning("same")
    flood_logger.error("same")  # another level: another record
    handler.flush()
    text = log_file.read_text(encoding="utf-8")
    assert all(f"event number {i}\n" in text for i in range(500))
    assert "WARNING tebiki.test.flood: same\n" in text and "ERROR tebiki.test.flood: same\n" in text
    assert "repeated" not in text and handler.collapsed_total == 0


def test_a_different_exception_type_is_not_collapsed(tmp_path, flood_logger):
    log_file = tmp_path / "tebiki.log"
    handler = CollapsingHandler([_file_handler(log_file)])
    flood_logger.addHandler(handler)
    for exc in (ValueError("a"), KeyError("b"), ValueError("c")):
        try:
            raise exc
        except Exception:
            flood_logger.exception("request failed")
    handler.flush()
    text = log_file.read_text(encoding="utf-8")
    assert "ValueError: a" in text and "KeyError: 'b'" in text
    assert "ValueError: c" not in text
    assert "repeated 1 times" in text


def test_a_lasting_flood_widens_its_window(tmp_path, flood_logger):
    log_file = tmp_path / "tebiki.log"
    clock = Clock()
    handler = CollapsingHandler([_file_handler(log_file)], window_s=10.0, clock=clock)
    flood_logger.addHandler(handler)
    for _ in range(3600):  # one a second for an hour
        flood_logger.error("still failing")
        clock.now += 1
    handler.flush()
    lines = log_file.read_text(encoding="utf-8").splitlines()
    # 10 s, 20 s, 40 s … windows: a handful of lines, not one per 10 s (360).
    assert len(lines) < 30
    assert sum(1 for ln in lines if ln.endswith("still failing")) + handler.collapsed_total == 3600


def test_configure_logging_rotates_the_file(tmp_path):
    log_file = tmp_path / "tebiki.log"
    root = logging.getLogger()
    level = root.level
    handler = configure_logging(log_file, max_bytes=20_000, backup_count=2, stream=False)
    try:
        log = logging.getLogger("tebiki.test.rotate")
        for i in range(5000):
            log.info(f"distinct line {i} " + "x" * 40)
        handler.flush()
    finally:
        root.removeHandler(handler)
        handler.close()
        root.setLevel(level)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["tebiki.log", "tebiki.log.1", "tebiki.log.2"]
    assert all((tmp_path / name).stat().st_size <= 20_000 for name in files)
    assert "distinct line 4999 " in log_file.read_text(encoding="utf-8")


def test_configuring_twice_replaces_the_handler(tmp_path):
    root = logging.getLogger()
    level = root.level
    first = configure_logging(tmp_path / "a.log", stream=False)
    second = configure_logging(tmp_path / "b.log", stream=False)
    try:
        assert first not in root.handlers and second in root.handlers
    finally:
        root.removeHandler(second)
        second.close()
        root.setLevel(level)


def test_rotation_keeps_the_newest_lines_and_drops_the_oldest_file(tmp_path):
    log_file = tmp_path / "tebiki.log"
    handler = RotatingLogFile(log_file, max_bytes=100, backup_count=2)
    handler.setFormatter(logging.Formatter("%(message)s"))
    try:
        for i in range(4):
            handler.handle(logging.makeLogRecord({"msg": f"line {i} " + "y" * 60}))
    finally:
        handler.close()
    files = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()}
    assert sorted(files) == ["tebiki.log", "tebiki.log.1", "tebiki.log.2"]
    assert files["tebiki.log"].startswith("line 3 ")
    assert files["tebiki.log.1"].startswith("line 2 ")
    assert files["tebiki.log.2"].startswith("line 1 ")  # line 0's file was dropped


def test_configuring_the_log_does_not_import_logging_handlers(tmp_path):
    # logging.handlers brings socket, pickle and queue: start-up time before the window shows.
    code = ("import json, sys, pathlib\n"
            "from app.core.logging_setup import configure_logging\n"
            f"configure_logging(pathlib.Path({str(tmp_path / 't.log')!r}), stream=False)\n"
            "print(json.dumps('logging.handlers' in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2], env=dict(os.environ),
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "false"
