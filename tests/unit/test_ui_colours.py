"""No colour is named in app/ui outside its tones module (app/ui/tones.py): a colour picked for
a light window is unreadable on a dark one, and only the tones module has a variant for each."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

UI = Path(__file__).resolve().parents[2] / "app" / "ui"
TONES = UI / "tones.py"
# Outside a tones module, only these may name a colour (path relative to app/ui: the reason).
ALLOWED: dict[str, str] = {}

_HEX = re.compile(r"#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?(?:[0-9a-fA-F]{2})?\b")
_FUNCTION = re.compile(r"\brgba?\s*\(|\bhsla?\s*\(")
# In code: Qt's named colours, or a QColor made from a literal name or numbers.
_CODE = re.compile(r"\bGlobalColor\b|\bQColor(?:\.fromRgbF?|\.fromHsl|\.fromHsv)?\(\s*[\"'\d]")


def colour_literals(source: str) -> list[tuple[int, str]]:
    """(line, text) of each colour named in ``source``: in its strings, and in its code."""
    found: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.STRING:
            found += [(token.start[0], m.group(0)) for pattern in (_HEX, _FUNCTION)
                      for m in pattern.finditer(token.string)]
    for number, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0] if '"' not in line and "'" not in line else line
        found += [(number, m.group(0)) for m in _CODE.finditer(code)]
    return found


def test_the_scanner_finds_colours_in_strings_and_code_but_not_in_comments_or_selectors():
    source = ('STYLE = "QLabel { color: #cf222e; }"  # was #ffffff\n'
              "x = QColor('#fff')\n"
              "y = Qt.GlobalColor.red\n"
              "z = f'background: rgb(1, 2, 3)'\n"
              'w = "QFrame#error-card { border: 1px solid palette(mid); }"\n'
              "# a comment naming #123456\n")
    assert [text for _line, text in colour_literals(source)] == [
        "#cf222e", "#fff", "rgb(", "QColor('", "GlobalColor"]


def test_no_colour_is_named_in_app_ui_outside_the_tones_module():
    offenders = []
    for path in sorted(UI.rglob("*.py")):
        if path == TONES or str(path.relative_to(UI)) in ALLOWED:
            continue
        offenders += [f"{path.relative_to(UI.parents[1])}:{line}: {text}"
                      for line, text in colour_literals(path.read_text(encoding="utf-8"))]
    assert offenders == [], "name a tone (app.ui.tones) instead:\n" + "\n".join(offenders)
