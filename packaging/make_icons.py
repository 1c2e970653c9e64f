"""Render the app icon's PNG sizes, the Windows .ico and the macOS .icns from the SVG sources.

Run by ``make icons``. The outputs are committed, so a build never needs this script; run it again
after editing ``resources/icons/*.svg``. Rendering uses QtSvg from PySide6 (already a dependency);
the .ico and .icns containers are written here, so no image library is needed.

Sources: ``tebiki.svg`` is the master (32 px and up); ``tebiki-16.svg`` and ``tebiki-24.svg`` are
hand-hinted for those sizes, because a scaled-down master blurs there.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ICONS = ROOT / "resources" / "icons"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS element types → pixel size. The @2x types (ic11-ic14) reuse the pixels of the larger size.
ICNS_TYPES = (
    (b"icp4", 16), (b"icp5", 32), (b"icp6", 64), (b"ic07", 128), (b"ic08", 256), (b"ic09", 512),
    (b"ic10", 1024), (b"ic11", 32), (b"ic12", 64), (b"ic13", 256), (b"ic14", 512),
)
# macOS draws icons on a 1024 grid with an 824 px tile; the master's tile is 448 of 512.
ICNS_INSET = (824 / 1024) / (448 / 512)


def _source_for(size: int) -> Path:
    hinted = ICONS / f"tebiki-{size}.svg"
    return hinted if hinted.is_file() else ICONS / "tebiki.svg"


def render(size: int, scale: float = 1.0, source: Path | None = None):
    """The icon as a non-premultiplied ARGB32 QImage of ``size`` px, the art scaled by ``scale``."""
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(source or _source_for(size)))
    if not renderer.isValid():
        raise SystemExit(f"cannot parse {source or _source_for(size)}")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    side = size * scale
    offset = (size - side) / 2
    renderer.render(painter, QRectF(offset, offset, side, side))
    painter.end()
    return image.convertToFormat(QImage.Format.Format_ARGB32)


def png_bytes(image) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise SystemExit("PNG encoding failed")
    buffer.close()
    return bytes(data)


def _bmp_entry(image) -> bytes:
    """A classic 32-bit DIB icon entry (BGRA rows bottom-up, then an all-zero AND mask)."""
    size = image.width()
    header = struct.pack("<IiiHHIIiiII", 40, size, size * 2, 1, 32, 0, 0, 0, 0, 0, 0)
    stride = image.bytesPerLine()
    bits = bytes(image.constBits())  # ARGB32 is stored as B, G, R, A on little-endian machines
    if sys.byteorder != "little":  # pragma: no cover - every supported build machine is LE
        raise SystemExit("ICO writing assumes a little-endian machine")
    rows = b"".join(bits[y * stride:y * stride + size * 4] for y in range(size - 1, -1, -1))
    mask_stride = ((size + 31) // 32) * 4
    return header + rows + bytes(mask_stride * size)


def ico_bytes(images: dict[int, object]) -> bytes:
    """Small sizes as DIBs (what every Windows tool reads), 256 px as PNG (what Vista+ expects)."""
    entries = [(size, png_bytes(img) if size >= 256 else _bmp_entry(img))
               for size, img in sorted(images.items())]
    out = struct.pack("<HHH", 0, 1, len(entries))
    offset = 6 + 16 * len(entries)
    for size, payload in entries:
        dim = 0 if size >= 256 else size
        out += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(payload), offset)
        offset += len(payload)
    return out + b"".join(payload for _, payload in entries)


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    body = b"".join(kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size]
                    for kind, size in ICNS_TYPES)
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def build(out_dir: Path) -> list[Path]:
    written: list[Path] = []

    def write(path: Path, data: bytes) -> None:
        path.write_bytes(data)
        written.append(path)

    images = {size: render(size) for size in PNG_SIZES}
    for size, image in images.items():
        write(out_dir / f"tebiki-{size}.png", png_bytes(image))
    write(out_dir / "tebiki.ico", ico_bytes({s: images[s] for s in ICO_SIZES}))
    master = ICONS / "tebiki.svg"
    mac = {size: png_bytes(render(size, ICNS_INSET, master))
           for size in sorted({size for _, size in ICNS_TYPES})}
    write(out_dir / "tebiki.icns", icns_bytes(mac))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ICONS,
                        help="output folder (default: %(default)s)")
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    args.out.mkdir(parents=True, exist_ok=True)
    for path in build(args.out):
        print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: "
              f"{path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
