"""Fenced code gets syntax colours from Pygments by the fence's language (plain when it is
unknown), lexed in a worker thread, readable on light and dark palettes; a streamed block ends
coloured as the same block rendered whole."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtGui import QColor, QTextBlock
from PySide6.QtWidgets import QApplication

import app.ui.widgets.code_colouring as code_colouring
from app.ui.contrast import contrast_ratio
from app.ui.widgets.markdown_style import code_colors
from app.ui.widgets.transcript_view import MessageView
from tests.ui.palettes import application_palette

SOURCE = ('Code:\n\n```python\ndef parse(text: str) -> int:\n    """Read it."""\n'
          '    return int(text)  # a number\n```\n\n```nosuchlanguage\nplain words here\n```\n')


def _fragments(view: MessageView) -> dict[str, QColor | None]:
    """Each code fragment's text → its foreground colour (None: the default)."""
    out: dict[str, QColor | None] = {}
    block: QTextBlock = view.document().begin()
    while block.isValid():
        for fragment_range in block.textFormats():
            text = block.text()[fragment_range.start:fragment_range.start + fragment_range.length]
            brush = fragment_range.format.foreground()
            out[text.strip()] = brush.color() if brush.style().value else None
        block = block.next()
    return out


def _coloured(qtbot, text: str) -> MessageView:
    view = MessageView(text)
    qtbot.addWidget(view)
    qtbot.waitUntil(view._stream.code_colouring.idle)
    QApplication.processEvents()
    return view


def test_python_is_coloured_and_an_unknown_language_stays_plain(qtbot):
    view = _coloured(qtbot, SOURCE)
    fragments = _fragments(view)
    assert fragments.get("def") is not None  # a keyword
    assert fragments.get('"""Read it."""') is not None  # a docstring
    assert fragments["def"] != fragments['"""Read it."""']
    assert fragments.get("plain words here") is None
    assert fragments.get("Code:") is None  # prose is left alone


def test_lexing_runs_off_the_gui_thread(qtbot, monkeypatch):
    threads: list[threading.Thread] = []
    lex = code_colouring.colour_spans

    def recording(code: str, language: str, dark: bool):
        threads.append(threading.current_thread())
        return lex(code, language, dark)

    monkeypatch.setattr(code_colouring, "colour_spans", recording)
    _coloured(qtbot, SOURCE)
    assert threads and threading.main_thread() not in threads


def test_a_streamed_block_ends_coloured_like_the_whole(qtbot):
    code = "\n".join(f"value_{i} = compute({i}, 'text')  # note {i}" for i in range(120))
    text = f"Here:\n\n```python\n{code}\n```\n\nAfter.\n"
    whole = _coloured(qtbot, text)
    streamed = MessageView("")
    qtbot.addWidget(streamed)
    for end in range(50, len(text) + 50, 50):
        streamed.append(text[end - 50:end])
        streamed.render_markdown()
        QApplication.processEvents()  # stale tail colours arrive while the text grows
    qtbot.waitUntil(streamed._stream.code_colouring.idle)
    QApplication.processEvents()
    assert _fragments(streamed) == _fragments(whole)
    assert _fragments(whole).get("# note 119") is not None


@pytest.mark.parametrize(("base", "text"), [("#ffffff", "#000000"), ("#1e1e1e", "#eeeeee")])
def test_colours_read_on_the_code_background_in_light_and_dark(qtbot, base, text):
    with application_palette(base, text):
        view = _coloured(qtbot, SOURCE)
        background, _inline = code_colors()
        colours = [c for c in _fragments(view).values() if c is not None]
        assert len(set(c.name() for c in colours)) >= 3  # several token kinds, told apart
        for colour in colours:
            assert contrast_ratio(colour, background) >= 4.5, colour.name()
