"""make_visible: invisible or deceptive characters become marked escapes; plain text is kept."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.core.visible_text import has_invisible, make_visible


def test_plain_text_and_every_script_are_unchanged() -> None:
    for text in ("git status\n\tok", "日本語のテキスト", "naïve café", "line\r\nend", "⟦x⟧"):
        assert make_visible(text) == text
        assert not has_invisible(text)


def test_deceptive_characters_are_marked() -> None:
    assert make_visible("rm -rf \u202e/ txt.exe") == "rm -rf ⟦U+202E⟧/ txt.exe"
    assert make_visible("\x1b[31mred\x1b[0m") == "⟦ESC⟧[31mred⟦ESC⟧[0m"
    assert make_visible("safe\roverwritten") == "safe⟦CR⟧overwritten"
    assert make_visible("a\u200bb") == "a⟦U+200B⟧b"
    assert make_visible("no\u00a0break") == "no⟦U+00A0⟧break"
    assert make_visible("nul\x00") == "nul⟦NUL⟧"
    assert make_visible("\ud800") == "⟦U+D800⟧"  # a lone surrogate cannot hide either


@given(st.text())
def test_result_has_no_invisible_characters_left(text: str) -> None:
    shown = make_visible(text)
    assert make_visible(shown) == shown  # idempotent: nothing left to mark
    for i, ch in enumerate(shown):
        if ch == "\r":
            assert shown[i + 1:i + 2] == "\n"
