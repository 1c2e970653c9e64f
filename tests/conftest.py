"""Shared fixtures: offscreen Qt, a fresh data dir and database per test, loopback-only fakes."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Collect garbage only here, on the main thread (see app/ui/gc_guard.py): fake servers and
# worker threads run Python too, and a QObject freed on one of them crashes Qt later.
gc.disable()
_tests_since_full_collection = 0


@pytest.fixture(autouse=True)
def collect_garbage_on_main_thread():
    global _tests_since_full_collection
    yield
    _tests_since_full_collection += 1
    if _tests_since_full_collection >= 25:
        _tests_since_full_collection = 0
        gc.collect()
    else:
        gc.collect(0)


@pytest.fixture(autouse=True)
def fresh_data_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test gets its own data dir, so nothing leaks between tests or into the user's."""
    data_dir = tmp_path_factory.mktemp("tebiki-data")
    monkeypatch.setenv("TEBIKI_DATA_DIR", str(data_dir))
    for secret in ("ANTHROPIC_API_KEY", "BRAVE_SEARCH_API_KEY"):
        monkeypatch.delenv(secret, raising=False)
    return data_dir


@pytest.fixture
def db(fresh_data_dir: Path):
    from app.core.store.db import open_database

    database = open_database(fresh_data_dir / "tebiki.sqlite3")
    yield database
    database.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder (resolved, so symlinked tmp dirs do not confuse path checks)."""
    root = (tmp_path / "project").resolve()
    root.mkdir()
    return root
