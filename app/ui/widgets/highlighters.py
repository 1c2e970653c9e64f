"""Syntax highlighting for the JSON inputs and unified diffs shown to the person."""

from __future__ import annotations

import re

from PySide6.QtGui import QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from app.ui.tones import Tone, tone


def _format(name: Tone, *, bold: bool = False, on_surface: bool = False) -> QTextCharFormat:
    """The tone's text colour, or (``on_surface``) its surface with the text that reads on it;
    picked for the palette of the moment the highlighter is made."""
    colours = tone(name)
    fmt = QTextCharFormat()
    if on_surface:
        fmt.setForeground(colours.on_surface)
        fmt.setBackground(colours.surface)
    else:
        fmt.setForeground(colours.text)
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    return fmt


class JsonHighlighter(QSyntaxHighlighter):
    _TOKEN = re.compile(r'("(?:\\.|[^"\\])*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|'
                        r"\b(true|false|null)\b")

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._key = _format(Tone.INFO, bold=True)
        self._string = _format(Tone.SUCCESS)
        self._number = _format(Tone.CAUTION)
        self._keyword = _format(Tone.REVIEW, bold=True)

    def highlightBlock(self, text: str) -> None:
        for match in self._TOKEN.finditer(text):
            if match.group(1):
                fmt = self._key if match.group(2) else self._string
                self.setFormat(match.start(1), len(match.group(1)), fmt)
            elif match.group(3):
                self.setFormat(match.start(3), len(match.group(3)), self._number)
            elif match.group(4):
                self.setFormat(match.start(4), len(match.group(4)), self._keyword)


class DiffHighlighter(QSyntaxHighlighter):
    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._added = _format(Tone.SUCCESS, on_surface=True)
        self._removed = _format(Tone.DANGER, on_surface=True)
        self._hunk = _format(Tone.INFO, bold=True)
        self._header = _format(Tone.MUTED, bold=True)

    def highlightBlock(self, text: str) -> None:
        if text.startswith(("+++", "---")):
            self.setFormat(0, len(text), self._header)
        elif text.startswith("@@"):
            self.setFormat(0, len(text), self._hunk)
        elif text.startswith("+"):
            self.setFormat(0, len(text), self._added)
        elif text.startswith("-"):
            self.setFormat(0, len(text), self._removed)
