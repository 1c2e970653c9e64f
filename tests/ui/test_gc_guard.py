"""The GUI-thread collector: automatic collection off, collections on its own timer, none
while a worker thread imports libraries."""

from __future__ import annotations

import gc
import threading

import pytest

import app.core.warmup as warmup
from app.ui.gc_guard import MainThreadGarbageCollector


@pytest.fixture
def guard(qtbot):
    was_enabled = gc.isenabled()
    collector = MainThreadGarbageCollector()
    yield collector
    collector.stop()
    if not was_enabled:
        gc.disable()


def _make_garbage(n: int = 5000) -> None:
    for _ in range(n):
        cycle: list = []
        cycle.append(cycle)


def test_collects_young_objects_on_its_turn(guard):
    assert not gc.isenabled()
    _make_garbage()
    assert gc.get_count()[0] > gc.get_threshold()[0]
    guard.check()
    assert gc.get_count()[0] < gc.get_threshold()[0]


def test_waits_while_a_worker_imports(guard):
    _make_garbage()
    before = gc.get_count()[0]
    assert warmup._lock.acquire(timeout=5)  # what import_all holds while importing
    try:
        assert warmup.importing()
        guard.check()
        assert gc.get_count()[0] >= before  # nothing was collected
    finally:
        warmup._lock.release()
    assert not warmup.importing()
    guard.check()
    assert gc.get_count()[0] < before


def test_import_all_reports_importing_while_it_runs(tmp_path, monkeypatch):
    seen: list[bool] = []
    (tmp_path / "probe_importing_mod.py").write_text(
        "import app.core.warmup as w\nSEEN = w.importing()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    worker = threading.Thread(target=lambda: seen.append(
        warmup.import_all(("probe_importing_mod",)) > 0))
    worker.start()
    worker.join(10)
    import probe_importing_mod

    assert probe_importing_mod.SEEN is True and seen == [True]
    assert not warmup.importing()
