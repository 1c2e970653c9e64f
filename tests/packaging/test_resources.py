"""The icon set and .desktop template in resources/, and app.resources finding them (fast)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from app import resources
from app.resources import ICON_SIZES, app_icon, resource_path
from tests.packaging.helpers import ROOT

ICONS = ROOT / "resources" / "icons"


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("size", ICON_SIZES)
def test_png_icon_sizes(size: int):
    assert png_size((ICONS / f"tebiki-{size}.png").read_bytes()) == (size, size)


def test_ico_holds_the_windows_sizes():
    data = (ICONS / "tebiki.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind) == (0, 1)
    sizes = []
    for i in range(count):
        width, height, _c, _r, _planes, bits, length, offset = struct.unpack(
            "<BBBBHHII", data[6 + 16 * i:22 + 16 * i])
        assert width == height and bits == 32 and offset + length <= len(data)
        sizes.append(width or 256)
    assert sorted(sizes) == [16, 24, 32, 48, 64, 128, 256]


def test_icns_holds_the_macos_sizes():
    data = (ICONS / "tebiki.icns").read_bytes()
    assert data[:4] == b"icns"
    assert struct.unpack(">I", data[4:8])[0] == len(data)
    kinds, pos = {}, 8
    while pos < len(data):
        kind, length = data[pos:pos + 4], struct.unpack(">I", data[pos + 4:pos + 8])[0]
        kinds[kind] = png_size(data[pos + 8:pos + length])[0]
        pos += length
    assert kinds[b"ic10"] == 1024 and kinds[b"ic07"] == 128 and kinds[b"icp4"] == 16


def test_svg_sources_render(qapp):
    from PySide6.QtSvg import QSvgRenderer

    for svg in ("tebiki.svg", "tebiki-16.svg", "tebiki-24.svg"):
        assert QSvgRenderer(str(ICONS / svg)).isValid(), svg


def test_desktop_template_validates():
    validator = shutil.which("desktop-file-validate")
    if validator is None:
        pytest.fail("desktop-file-validate is missing: install Debian's desktop-file-utils "
                    "(`make sysdeps` does it when run as root)")
    proc = subprocess.run([validator, str(ROOT / "resources" / "tebiki.desktop")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "error" not in proc.stdout, proc.stdout


def test_resource_path_finds_source_tree_files():
    assert resource_path("icons/tebiki.svg") == ICONS / "tebiki.svg"


def test_resource_path_prefers_the_frozen_bundle(tmp_path: Path, monkeypatch):
    frozen = tmp_path / "_internal"
    (frozen / "resources" / "icons").mkdir(parents=True)
    (frozen / "resources" / "icons" / "tebiki.svg").write_text("<svg/>")
    monkeypatch.setattr(sys, "_MEIPASS", str(frozen), raising=False)
    assert resource_path("icons/tebiki.svg") == frozen / "resources" / "icons" / "tebiki.svg"
    # Files the bundle lacks still come from the next root rather than failing.
    assert resource_path("tebiki.desktop") == ROOT / "resources" / "tebiki.desktop"


def test_resource_path_errors_name_the_places_searched():
    with pytest.raises(FileNotFoundError, match="looked in"):
        resource_path("icons/no-such-icon.png")
    with pytest.raises(ValueError):
        resource_path("../pyproject.toml")


def test_app_icon_has_every_size(qapp):
    app_icon.cache_clear()
    icon = app_icon()
    assert not icon.isNull()
    sizes = {size.width() for size in icon.availableSizes()}
    assert set(ICON_SIZES) <= sizes


def test_app_icon_falls_back_to_theme_when_files_are_missing(qapp, monkeypatch, tmp_path):
    monkeypatch.setattr(resources, "resource_roots", lambda: [tmp_path])
    app_icon.cache_clear()
    try:
        icon = app_icon()  # the theme may or may not know "tebiki"; it must not raise
        assert icon.isNull() or icon.name() == "tebiki"
    finally:
        app_icon.cache_clear()
