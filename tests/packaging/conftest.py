"""Builds the PyInstaller bundle and release tarball once per test session, into a temp folder.

The build is the slow part (about a minute on two cores), so every packaging test shares it. A
missing PyInstaller is a failure, not a skip: `make test` must prove the package builds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.packaging.helpers import APP_ID, ROOT, VERSION, Build


@pytest.fixture(scope="session")
def frozen_build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    if sys.platform != "linux":
        pytest.skip("the packaging tests build and install the Linux bundle")
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        pytest.fail("PyInstaller is not installed: the `test` extra must include it "
                    f"(or run `{sys.executable} -m pip install 'pyinstaller>=6.10'`)")
    base = tmp_path_factory.mktemp("pyinstaller")
    dist, work = base / "dist", base / "work"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "build.py"), "--dist", str(dist),
         "--work", str(work)],
        cwd=base, capture_output=True, text=True, timeout=1200,
    )
    if proc.returncode != 0:
        pytest.fail(f"packaging/build.py failed (exit {proc.returncode}):\n"
                    f"{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")
    machine = os.uname().machine.lower()
    return Build(dist=dist, bundle=dist / APP_ID,
                 tarball=dist / f"{APP_ID}-{VERSION}-linux-{machine}.tar.gz", output=proc.stdout)


@pytest.fixture(scope="session")
def release_dir(frozen_build: Build, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release tarball unpacked the way a person would: `tar xzf` into some folder."""
    assert frozen_build.tarball.is_file(), f"no tarball at {frozen_build.tarball}"
    target = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(frozen_build.tarball) as tar:
        tar.extractall(target, filter="tar")
    return target / f"{APP_ID}-{VERSION}"
