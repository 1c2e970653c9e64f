"""What makes a run reproducible: requirements.lock agrees with pyproject.toml and with the
installed venv, and CI runs Hypothesis derandomized (tests/conftest.py's "ci" profile)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements.lock"
# The lock's annotation for a requirement that pyproject.toml names directly.
TOP_LEVEL_VIA = "tebiki (pyproject.toml)"


def parse_lock(text: str) -> tuple[dict[str, Version], set[str]]:
    """Pins (canonical name -> version) and the names pip-compile marks as pyproject's own."""
    pins: dict[str, Version] = {}
    top_level: set[str] = set()
    current = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            # "# via X" or, for several sources, "#   X" lines under "# via".
            source = stripped.lstrip("#").strip().removeprefix("via").strip()
            if current and source == TOP_LEVEL_VIA:
                top_level.add(current)
            continue
        requirement = Requirement(stripped)
        specs = list(requirement.specifier)
        assert len(specs) == 1 and specs[0].operator == "==", f"not an exact pin: {line!r}"
        current = canonicalize_name(requirement.name)
        assert current not in pins, f"pinned twice: {current}"
        pins[current] = Version(specs[0].version)
    return pins, top_level


def declared_requirements(pyproject: dict) -> list[Requirement]:
    """pyproject's runtime dependencies and its test extra (what `make test` installs)."""
    project = pyproject["project"]
    return [Requirement(r) for r in
            [*project["dependencies"], *project["optional-dependencies"]["test"]]]


def applies(requirement: Requirement, extra: str = "") -> bool:
    if requirement.marker is None:
        return True
    return requirement.marker.evaluate({**default_environment(), "extra": extra})


def pin_problems(requirements: list[Requirement], pins: dict[str, Version],
                 top_level: set[str]) -> list[str]:
    problems = []
    wanted = set()
    for requirement in requirements:
        if not applies(requirement):
            continue
        name = canonicalize_name(requirement.name)
        wanted.add(name)
        if name not in pins:
            problems.append(f"{name}: in pyproject.toml, not pinned in the lock")
        elif not requirement.specifier.contains(pins[name], prereleases=True):
            problems.append(f"{name}: pinned {pins[name]}, pyproject wants {requirement.specifier}")
    # A name the lock still lists as pyproject's own but pyproject no longer declares is stale.
    problems += [f"{name}: locked as a direct dependency, not in pyproject.toml"
                 for name in sorted(top_level - wanted)]
    return problems


@pytest.fixture(scope="module")
def lock() -> tuple[dict[str, Version], set[str]]:
    return parse_lock(LOCK.read_text(encoding="utf-8"))


def test_every_declared_dependency_is_pinned_within_its_specifier(lock):
    pins, top_level = lock
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pin_problems(declared_requirements(pyproject), pins, top_level) == []
    # The tools `make test` runs must come from the lock, not from whatever is on PATH.
    for tool in ("ruff", "mypy", "import-linter", "pytest", "hypothesis", "packaging"):
        assert tool in top_level


def test_lock_is_closed_under_dependencies(lock):
    """Every requirement of every pinned package is itself pinned, and within its range:
    otherwise `pip install -r` would resolve something the lock does not name."""
    pins, _ = lock
    problems = []
    for name, version in pins.items():
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            continue  # reported by test_installed_environment_matches_the_lock
        for text in requires:
            requirement = Requirement(text)
            if not applies(requirement):
                continue
            dep = canonicalize_name(requirement.name)
            if dep not in pins:
                problems.append(f"{name}=={version} needs {requirement}, not in the lock")
            elif not requirement.specifier.contains(pins[dep], prereleases=True):
                problems.append(f"{name}=={version} needs {requirement}, lock has {pins[dep]}")
    assert problems == []


def test_installed_environment_matches_the_lock(lock):
    """A venv that drifted (a hand-installed upgrade, a stale bootstrap) is caught here."""
    pins, _ = lock
    drift = []
    for name, version in sorted(pins.items()):
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            drift.append(f"{name}: locked {version}, not installed")
            continue
        if Version(installed) != version:
            drift.append(f"{name}: locked {version}, installed {installed}")
    assert drift == [], "run `make test` (it re-bootstraps the venv from the lock)"


def test_checks_catch_a_bad_lock():
    text = (
        "httpx==0.20.0\n    # via tebiki (pyproject.toml)\n"
        "anyio==4.0\n    # via\n    #   httpx\n    #   tebiki (pyproject.toml)\n"
        "idna==3.0\n    # via anyio\n"
    )
    pins, top_level = parse_lock(text)
    assert pins == {"httpx": Version("0.20.0"), "anyio": Version("4.0"), "idna": Version("3.0")}
    assert top_level == {"httpx", "anyio"}
    problems = pin_problems(
        [Requirement("httpx>=0.27"), Requirement("Sniffio>=1"),
         Requirement("pywin32>=300; sys_platform == 'nonexistent'")],
        pins, top_level)
    assert problems == [
        "httpx: pinned 0.20.0, pyproject wants >=0.27",
        "sniffio: in pyproject.toml, not pinned in the lock",
        "anyio: locked as a direct dependency, not in pyproject.toml",
    ]
    with pytest.raises(AssertionError, match="not an exact pin"):
        parse_lock("httpx>=0.27\n")


# Two runs of a property test with CI set must try the same examples, even though the test sets
# its own @settings (which overrides only what it names).
_PROBE = """
import json, sys
sys.path.insert(0, {root!r})
import tests.conftest
from hypothesis import given, settings, strategies as st
seen = []
@settings(max_examples=25)
@given(st.integers())
def probe(x):
    seen.append(x)
probe()
print(json.dumps([settings.get_current_profile_name(), seen]))
"""


def _probe(tmp_path: Path, **env: str) -> tuple[str, list[int]]:
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")}
    proc = subprocess.run([sys.executable, "-c", _PROBE.format(root=str(ROOT))],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**clean, **env})
    assert proc.returncode == 0, proc.stderr
    profile, seen = json.loads(proc.stdout.strip().splitlines()[-1])
    return profile, seen


def test_ci_runs_property_tests_derandomized(tmp_path):
    first = _probe(tmp_path, CI="true")
    second = _probe(tmp_path, CI="true")
    assert first[0] == "ci"
    assert len(first[1]) >= 25 and first == second
    # No example database under CI: nothing from one run steers the next.
    assert not (tmp_path / ".hypothesis").exists()
    assert _probe(tmp_path, HYPOTHESIS_PROFILE="ci")[1] == first[1]


def test_dev_runs_are_random(tmp_path):
    profile, seen = _probe(tmp_path)
    assert profile == "dev"
    assert seen != _probe(tmp_path, CI="true")[1]


def test_only_the_root_conftest_chooses_a_hypothesis_profile():
    """A test module that loads a profile replaces the CI profile for every test collected after
    it: the run is no longer derandomized, and which tests it hits depends on collection order."""
    allowed = {ROOT / "tests" / "conftest.py", Path(__file__).resolve()}  # this file: the check
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in (ROOT / "tests").rglob("*.py") if path not in allowed
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "load_profile(" in line or "register_profile(" in line
    ]
    assert offenders == []
