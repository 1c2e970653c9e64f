"""The README's images exist, are PNGs, and are the ones scripts/take_screenshots.py renders
(so retaking the screenshots refreshes every image the README shows, and none goes stale)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def readme_images() -> list[str]:
    return _IMAGE.findall((ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_readme_shows_the_screenshots() -> None:
    names = {Path(path).name for path in readme_images()}
    assert {"main-window.png", "approval-dialog.png", "conversations.png",
            "tokens.png"} <= names


def test_every_readme_image_is_a_png_in_the_repository() -> None:
    for path in readme_images():
        assert not re.match(r"[a-z]+://", path), f"{path}: the README must stand on its own"
        image = ROOT / path
        assert image.is_file(), f"{path} is missing"
        assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"


def test_every_readme_image_is_rendered_by_the_screenshot_script() -> None:
    script = (ROOT / "scripts" / "take_screenshots.py").read_text(encoding="utf-8")
    for path in readme_images():
        if path.startswith("resources/screenshots/"):
            assert f'"{Path(path).name}"' in script, f"{path} is not retaken by the script"
