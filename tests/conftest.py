"""Shared fixtures: offscreen Qt, a fresh data dir and database per test, loopback-only fakes."""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.fifo_support import make_fifo  # noqa: F401  (a fixture for every test)

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Hypothesis profiles, chosen by HYPOTHESIS_PROFILE, else "ci" when CI is set, else "dev".
#  ci:   derandomized (the same tree tries the same examples on every run, so a CI failure
#        reproduces and a green run is not luck), no deadline (a loaded CI machine is slow, not
#        wrong), no example database (nothing carried between runs), and a failing example's
#        reproduction blob printed. `make test` always uses it.
#  dev:  random examples, failures remembered in .hypothesis/; no deadline either (two cores
#        shared with other work make timings noise).
#  fuzz: `make fuzz`: random, ten times each test's own example count (see below).
# Profiles are loaded here and only here (tests/unit/test_lockfile.py checks), before test
# modules import: a test's @settings(...) takes the profile current at that moment as parent and
# overrides only what it names itself, so a test that sets max_examples is still derandomized
# under "ci".
settings.register_profile(
    "ci", derandomize=True, deadline=None, database=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.register_profile("fuzz", max_examples=2000, deadline=None, print_blob=True)
_FUZZ_FACTOR = 10
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE")
    or ("ci" if os.environ.get("CI", "").lower() not in ("", "0", "false") else "dev"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under "fuzz", raise each property test's example count.

    Most tests pin max_examples in their own @settings, which beats any profile, so the fuzz
    profile alone would not run them longer. Re-parent their settings the way Hypothesis's own
    pytest plugin does: at least the profile's count, or ten times the test's own.
    """
    if settings.get_current_profile_name() != "fuzz":
        return
    for item in items:
        fn = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        own = getattr(fn, "_hypothesis_internal_use_settings", None)
        if own is None:
            continue
        fn._hypothesis_internal_use_settings = settings(
            parent=own, max_examples=max(settings.default.max_examples,
                                         own.max_examples * _FUZZ_FACTOR))


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


# Folders the OS sandbox can see (tests.sandbox_support has the rest of its test kit).
@pytest.fixture
def visible() -> Iterator[Path]:
    """A folder outside /tmp: the sandbox's /tmp is private, so a test folder under it would
    be out of reach for that reason alone; these must be stopped by the walls under test."""
    folder = Path(tempfile.mkdtemp(prefix="tebiki-sandbox-test-", dir="/var/tmp")).resolve()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def outside(visible: Path) -> Path:
    folder = visible / "outside"
    folder.mkdir()
    return folder
