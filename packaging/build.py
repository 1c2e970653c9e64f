"""Build the Tebiki bundle with PyInstaller, then the platform's archive or installer.

    python packaging/build.py [--dist DIR] [--work DIR] [--no-archive]

Linux: ``<dist>/tebiki/`` (one-dir bundle, with install-desktop.sh and uninstall-desktop.sh at
its top) and ``<dist>/tebiki-<version>-linux-<arch>.tar.gz`` (that folder as ``tebiki-<version>/``).
macOS: ``<dist>/Tebiki.app`` and, when ``hdiutil`` exists, ``tebiki-<version>-macos-<arch>.dmg``.
Windows: ``<dist>\\tebiki\\`` and, when Inno Setup's ``iscc`` is on PATH (or ISCC points at it),
``tebiki-<version>-windows-x64-setup.exe``.

Prints ``name: value`` lines (sizes, seconds) so scripts and tests can read the results.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "packaging" / "tebiki.spec"
APP_ID = "tebiki"
LINUX_SCRIPTS = ("install-desktop.sh", "uninstall-desktop.sh")


def project_version() -> str:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return data["project"]["version"]


def tree_size(path: Path) -> int:
    """Bytes of the regular files under ``path`` (symlinks not followed, not counted twice)."""
    total = 0
    for dirpath, _dirnames, filenames in os.walk(path):
        for name in filenames:
            file = Path(dirpath, name)
            if not file.is_symlink():
                total += file.stat().st_size
    return total


def mib(size: int) -> str:
    return f"{size / 2**20:.1f}"


def run_pyinstaller(dist: Path, work: Path) -> None:
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        raise SystemExit("PyInstaller is not installed in this environment: "
                         f"{sys.executable} -m pip install 'pyinstaller>=6.10'") from None
    command = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean",
               "--log-level", os.environ.get("PYINSTALLER_LOG_LEVEL", "WARN"),
               "--distpath", str(dist), "--workpath", str(work), str(SPEC)]
    subprocess.run(command, check=True, cwd=ROOT)


def add_linux_scripts(bundle: Path) -> None:
    for name in LINUX_SCRIPTS:
        target = bundle / name
        shutil.copyfile(ROOT / "packaging" / "linux" / name, target)
        target.chmod(0o755)


def make_tarball(bundle: Path, dist: Path, version: str) -> Path:
    """``tebiki-<version>/`` in a .tar.gz, owned by nobody in particular, symlinks kept."""
    arch = platform.machine().lower() or "unknown"
    archive = dist / f"{APP_ID}-{version}-linux-{arch}.tar.gz"
    top = f"{APP_ID}-{version}"

    def normalise(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    partial = archive.with_name(archive.name + ".partial")
    with tarfile.open(partial, "w:gz", compresslevel=6) as tar:
        tar.add(bundle, arcname=top, filter=normalise)
    partial.replace(archive)
    return archive


def make_dmg(app: Path, dist: Path, version: str) -> Path | None:
    if not shutil.which("hdiutil"):
        print("note: hdiutil not found; skipping the .dmg")
        return None
    dmg = dist / f"{APP_ID}-{version}-macos-{platform.machine().lower()}.dmg"
    dmg.unlink(missing_ok=True)
    subprocess.run(["hdiutil", "create", "-volname", "Tebiki", "-srcfolder", str(app),
                    "-ov", "-format", "UDZO", str(dmg)], check=True)
    return dmg


def make_windows_installer(dist: Path, version: str) -> Path | None:
    iscc = os.environ.get("ISCC") or shutil.which("iscc") or shutil.which("ISCC")
    if not iscc:
        print("note: Inno Setup's iscc not found (set ISCC=...\\ISCC.exe); skipping the installer")
        return None
    script = ROOT / "packaging" / "windows" / "tebiki.iss"
    subprocess.run([iscc, f"/DAppVersion={version}", f"/DBundleDir={dist / APP_ID}",
                    f"/DOutputDir={dist}", str(script)], check=True)
    return dist / f"{APP_ID}-{version}-windows-x64-setup.exe"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="output folder")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "pyinstaller",
                        help="PyInstaller's work folder")
    parser.add_argument("--no-archive", action="store_true",
                        help="only the bundle: no tarball, .dmg or installer")
    args = parser.parse_args(argv)
    dist, work = args.dist.resolve(), args.work.resolve()
    version = project_version()

    started = time.perf_counter()
    run_pyinstaller(dist, work)
    bundle = dist / APP_ID
    print(f"pyinstaller_seconds: {time.perf_counter() - started:.1f}")
    if sys.platform.startswith("linux"):
        add_linux_scripts(bundle)
    print(f"bundle: {bundle}")
    print(f"bundle_mib: {mib(tree_size(bundle))}")

    if args.no_archive:
        return 0
    artifact: Path | None = None
    if sys.platform.startswith("linux"):
        artifact = make_tarball(bundle, dist, version)
    elif sys.platform == "darwin":
        artifact = make_dmg(dist / "Tebiki.app", dist, version)
    elif sys.platform == "win32":
        artifact = make_windows_installer(dist, version)
    if artifact is not None:
        print(f"archive: {artifact}")
        print(f"archive_mib: {mib(artifact.stat().st_size)}")
    print(f"total_seconds: {time.perf_counter() - started:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
