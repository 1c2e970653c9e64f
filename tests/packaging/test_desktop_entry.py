"""Installing the release for one user: a valid menu entry whose Exec and Icon resolve, and a
clean uninstall. Runs the install script from the unpacked release tarball, as a person would,
into a temporary PREFIX/XDG_DATA_HOME (HOME too, so nothing can touch the real one)."""

from __future__ import annotations

import configparser
import os
import shlex
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from tests.packaging.helpers import APP_ID, ROOT, frozen_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def desktop_file_validate(path: Path) -> subprocess.CompletedProcess[str]:
    validator = shutil.which("desktop-file-validate")
    if validator is None:
        pytest.fail("desktop-file-validate is missing: install Debian's desktop-file-utils "
                    "(`make sysdeps` does it when run as root)")
    return subprocess.run([validator, str(path)], capture_output=True, text=True, timeout=60)


def read_desktop_entry(path: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return dict(parser["Desktop Entry"])


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", header[16:24])


def install_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    # Spaces in both paths: Exec must come out quoted, and the scripts must quote everything.
    env = frozen_env(HOME=str(home), PREFIX=str(tmp_path / "user prefix"),
                     XDG_DATA_HOME=str(tmp_path / "xdg data"))
    env.pop("DESTDIR", None)
    env.update(extra)
    return env


def run_script(script: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["sh", str(script), *args], capture_output=True, text=True, env=env,
                          cwd=env["HOME"], timeout=300)
    assert proc.returncode == 0, f"{script.name} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_install_registers_a_valid_entry_that_resolves(release_dir: Path, tmp_path: Path):
    env = install_env(tmp_path)
    run_script(release_dir / "install-desktop.sh", env)

    prefix, data = Path(env["PREFIX"]), Path(env["XDG_DATA_HOME"])
    desktop = data / "applications" / f"{APP_ID}.desktop"  # the id main.py passes to Qt
    assert desktop.is_file()
    validation = desktop_file_validate(desktop)
    problems = [line for line in (validation.stdout + validation.stderr).splitlines()
                if "error" in line or "warning" in line]
    assert validation.returncode == 0 and not problems, validation.stdout + validation.stderr

    entry = read_desktop_entry(desktop)
    assert entry["Type"] == "Application"
    assert entry["Name"] == "Tebiki"
    assert entry["StartupWMClass"] == APP_ID
    assert "Development" in entry["Categories"].split(";")

    # Exec resolves to the installed bundle's executable, which really starts.
    argv = shlex.split(entry["Exec"])
    exe = prefix / "lib" / APP_ID / APP_ID
    assert argv == [str(exe), "%F"]  # "Open with Tebiki" on a folder passes it
    assert "inode/directory" in entry["MimeType"].split(";")
    argv = argv[:1]
    assert entry["TryExec"] == str(exe)
    assert exe.is_file() and os.access(exe, os.X_OK)
    smoke = subprocess.run([*argv, "--smoke-test"], capture_output=True, text=True, timeout=120,
                           cwd=tmp_path, env=frozen_env(TEBIKI_DATA_DIR=str(tmp_path / "d")))
    assert smoke.returncode == 0, smoke.stderr
    assert "smoke test ok" in smoke.stdout

    # Icon is a theme name found in the user's hicolor theme, at every size.
    assert entry["Icon"] == APP_ID
    hicolor = data / "icons" / "hicolor"
    for size in ICON_SIZES:
        png = hicolor / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        assert png.is_file(), png
        assert png_size(png) == (size, size)
    assert (hicolor / "scalable" / "apps" / f"{APP_ID}.svg").is_file()

    # The terminal launcher points at the same executable.
    launcher = prefix / "bin" / APP_ID
    assert launcher.is_symlink() and launcher.resolve() == exe.resolve()

    # Uninstalling (with the copy the install left next to the app) removes every file.
    run_script(prefix / "lib" / APP_ID / "uninstall-desktop.sh", env)
    shared_caches = {"mimeinfo.cache", "icon-theme.cache"}  # the desktop's indexes, not ours
    leftovers = [p for root in (prefix, data) for p in root.rglob("*")
                 if not p.is_dir() and p.name not in shared_caches]
    assert not leftovers, f"left behind: {leftovers}"
    assert not (prefix / "lib" / APP_ID).exists()


def test_reinstall_replaces_the_previous_install(release_dir: Path, tmp_path: Path):
    env = install_env(tmp_path)
    run_script(release_dir / "install-desktop.sh", env)
    stale = Path(env["PREFIX"]) / "lib" / APP_ID / "_internal" / "stale-file"
    stale.write_text("from an older version")
    run_script(release_dir / "install-desktop.sh", env)
    assert not stale.exists()
    assert (Path(env["PREFIX"]) / "lib" / APP_ID / APP_ID).is_file()


def test_destdir_stages_without_leaking_into_paths(release_dir: Path, tmp_path: Path):
    stage = tmp_path / "stage"
    env = install_env(tmp_path, DESTDIR=str(stage), PREFIX="/opt/tebiki-test",
                      XDG_DATA_HOME="/opt/tebiki-test/share")
    run_script(release_dir / "install-desktop.sh", env)
    desktop = stage / "opt/tebiki-test/share/applications" / f"{APP_ID}.desktop"
    entry = read_desktop_entry(desktop)
    assert entry["Exec"] == f"/opt/tebiki-test/lib/{APP_ID}/{APP_ID} %F"
    assert os.readlink(stage / "opt/tebiki-test/bin" / APP_ID) == \
        entry["Exec"].removesuffix(" %F")
    assert (stage / "opt/tebiki-test/lib" / APP_ID / APP_ID).is_file()
    assert (stage / "opt/tebiki-test/share/icons/hicolor/48x48/apps" / f"{APP_ID}.png").is_file()
    assert desktop_file_validate(desktop).returncode == 0


def test_install_refuses_a_folder_that_is_not_a_bundle(tmp_path: Path):
    not_a_bundle = tmp_path / "empty"
    not_a_bundle.mkdir()
    proc = subprocess.run(["sh", str(ROOT / "packaging/linux/install-desktop.sh"),
                           str(not_a_bundle)], capture_output=True, text=True,
                          env=install_env(tmp_path), timeout=60)
    assert proc.returncode != 0
    assert "no Tebiki bundle" in proc.stderr
    assert not (tmp_path / "user prefix").exists()
