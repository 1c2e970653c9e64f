"""Syntax highlighting for the JSON inputs and unified diffs shown to the person."""

from __future__ import annotations

import re

from PySide6.QtGui import (
    QColor,
    QFont,
    QPalette,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import QApplication


def _is_dark() -> bool:
    palette = QApplication.palette()
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def _format(light: str, dark: str, *, bold: bool = False,
            background: tuple[str, str] | None = None) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(dark if _is_dark() else light))
    if background is not None:
        fmt.setBackground(QColor(background[1] if _is_dark() else background[0]))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    return fmt


class JsonHighlighter(QSyntaxHighlighter):
    _TOKEN = re.compile(r'("(?:\\.|[^"\\])*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|'
                        r"\b(true|false|null)\b")

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._key = _format("#0b5cad", "#7cb7ff", bold=True)
        self._string = _format("#1a7f37", "#8ddb8c")
        self._number = _format("#953800", "#ffa657")
        self._keyword = _format("#8250df", "#d2a8ff", bold=True)

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
        self._added = _format("#116329", "#aff5b4", background=("#dafbe1", "#033a16"))
        self._removed = _format("#82071e", "#ffdcd7", background=("#ffebe9", "#67060c"))
        self._hunk = _format("#0550ae", "#a5d6ff", bold=True)
        self._header = _format("#57606a", "#8b949e", bold=True)

    def highlightBlock(self, text: str) -> None:
        if text.startswith(("+++", "---")):
            self.setFormat(0, len(text), self._header)
        elif text.startswith("@@"):
            self.setFormat(0, len(text), self._hunk)
        elif text.startswith("+"):
            self.setFormat(0, len(text), self._added)
        elif text.startswith("-"):
            self.setFormat(0, len(text), self._removed)
