"""Syntax colours for the fenced code in a message, worked out off the GUI thread.

Pygments lexes a code run in a worker thread (its import too: it is not part of start-up, the
warm-up loads it); the GUI thread only merges the resulting colours into the document, a few
milliseconds at a time, so even a 2,000-line block never holds the GUI. The language is the
fence's (Qt's reader keeps it on the block); an unknown one stays plain. Colours come from a
light or a dark Pygments style, picked by the palette, and are leaned toward the text colour
where they would read poorly on the code block's background.

Parts of a streamed message that are frozen never move, so their colours are applied whenever
they arrive; the tail is replaced on each render, so its colours are dropped when a newer tail
replaced it (``forget_tail``), and all of them when the message is re-rendered (``reset``).
"""

from __future__ import annotations

import collections
import concurrent.futures
import functools
import logging
import time
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QGuiApplication,
    QPalette,
    QTextBlock,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)

from app.ui.contrast import lean_until_readable
from app.ui.widgets.markdown_style import code_colors

log = logging.getLogger(__name__)

LIGHT_STYLE = "default"
DARK_STYLE = "github-dark"
MIN_CONTRAST = 4.5             # WCAG AA for text, against the code block's background
APPLY_BUDGET_S = 0.002         # GUI time spent reading code or merging colours per turn
# A new request waits this long: the render that asked for it lays out and paints first, in
# its own turn, instead of the first slice of colouring adding to that turn's stall.
START_DELAY_MS = 50
_TOKENS_PER_YIELD = 50
_CODE_FENCE = QTextFormat.Property.BlockCodeFence
_LANGUAGE = QTextFormat.Property.BlockCodeLanguage
_KEEP_ANCHOR = QTextCursor.MoveMode.KeepAnchor

# (offset in the run's code, length, #rrggbb, bold, italic)
Span = tuple[int, int, str, bool, bool]


@dataclass(frozen=True)
class CodeRun:
    start: int     # document position of its first character
    code: str      # its lines joined by "\n": a block separator is one position, like "\n"
    language: str


def colour_spans(code: str, language: str, dark: bool) -> list[Span]:
    """Pygments' colours for ``code`` (worker thread); none for a language it does not know."""
    # Imported here, in the worker: Pygments is not part of start-up (the warm-up loads it).
    from pygments.lexers import get_lexer_by_name
    from pygments.styles import get_style_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(language, stripnl=False, stripall=False, ensurenl=False)
    except ClassNotFound:
        return []
    style = get_style_by_name(DARK_STYLE if dark else LIGHT_STYLE)
    spans: list[Span] = []
    offset = 0
    for count, (token, text) in enumerate(lexer.get_tokens(code)):
        if count % _TOKENS_PER_YIELD == 0:
            # Hand the GIL over now and then: a GUI thread waiting for it would otherwise wait
            # out the interpreter's whole switch interval (5 ms) at each Qt call it makes.
            time.sleep(0)
        token_style = style.style_for_token(token)
        if token_style["color"] and text.strip():
            spans.append((offset, len(text), "#" + token_style["color"],
                          bool(token_style["bold"]), bool(token_style["italic"])))
        offset += len(text)
    return spans if offset == len(code) else []  # a lexer that rewrote the text: plain


@functools.lru_cache(maxsize=256)
def readable(color: str, background_rgb: int, text_rgb: int) -> QColor:
    """``color``, leaned toward the text colour until it reads on the background."""
    return lean_until_readable(QColor(color), (QColor.fromRgb(background_rgb),),
                               QColor.fromRgb(text_rgb), MIN_CONTRAST)


@functools.cache
def _executor() -> concurrent.futures.ThreadPoolExecutor:
    # One worker for every message: lexing is CPU work, and a second one would only contend.
    return concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="code-colours")


class CodeColouring(QObject):
    """Colours the code runs of one message's document (see the module docstring)."""

    _done = Signal(object, object)  # (ticket, [(run, spans)]), from the worker

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._document = document
        self._epoch = 0        # bumped by reset: everything requested before is stale
        self._tail_epoch = 0   # bumped by forget_tail: the tail's requests are stale
        self._requested = 0
        self._answered = 0
        self._scans: collections.deque[_Scan] = collections.deque()
        # (ticket, run start, spans still to merge: taken from the end)
        self._pending: collections.deque[tuple[tuple[int, int | None], int, list[Span]]] = \
            collections.deque()
        self._formats: dict[tuple[str, bool, bool], QTextCharFormat] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._apply_some)
        self._done.connect(self._received)

    def reset(self) -> None:
        self._epoch += 1
        self._tail_epoch += 1
        self._pending.clear()
        self._formats.clear()  # the palette may have changed

    def forget_tail(self) -> None:
        self._tail_epoch += 1

    def idle(self) -> bool:
        """Every requested run is coloured (or dropped as stale)."""
        return self._answered == self._requested and not self._pending and not self._scans

    def colour(self, start: int, end: int, *, tail: bool) -> None:
        """Colour the code between ``start`` and ``end`` when the worker has lexed it. The
        document is read for it in slices, on later turns of the event loop."""
        ticket = (self._epoch, self._tail_epoch if tail else None)
        self._scans.append(_Scan(ticket, start, end))
        self._requested += 1
        if not self._timer.isActive():
            self._timer.start(START_DELAY_MS)

    def _scan_some(self, deadline: float) -> None:
        scan = self._scans[0]
        if not self._current(scan.ticket):
            self._scans.popleft()
            self._answered += 1
            return
        block = self._document.findBlock(scan.position)
        while block.isValid() and block.position() < scan.end:
            scan.add(block)
            block = block.next()
            if time.perf_counter() > deadline:
                scan.position = block.position() if block.isValid() else scan.end
                return
        self._scans.popleft()
        runs = scan.finish()
        if not runs:
            self._answered += 1
            return
        dark = QGuiApplication.palette().color(QPalette.ColorRole.Base).lightness() < 128
        future = _executor().submit(
            lambda: [(run, colour_spans(run.code, run.language, dark)) for run in runs])
        future.add_done_callback(lambda done: self._deliver(scan.ticket, done))

    def _deliver(self, ticket: tuple[int, int | None],
                 done: concurrent.futures.Future[list[tuple[CodeRun, list[Span]]]]) -> None:
        try:
            result = done.result()
        except Exception:  # a lexer bug: that code stays plain
            log.exception("colouring code failed")
            result = []
        try:
            self._done.emit(ticket, result)  # queued to the GUI thread
        except RuntimeError:  # the message was closed meanwhile
            pass

    def _current(self, ticket: tuple[int, int | None]) -> bool:
        epoch, tail_epoch = ticket
        return epoch == self._epoch and tail_epoch in (None, self._tail_epoch)

    def _received(self, ticket: tuple[int, int | None],
                  result: list[tuple[CodeRun, list[Span]]]) -> None:
        self._answered += 1
        if self._current(ticket):
            self._pending.extend((ticket, run.start, spans) for run, spans in result if spans)
            if not self._timer.isActive():
                self._timer.start(0)

    def _format(self, color: str, bold: bool, italic: bool) -> QTextCharFormat:
        key = (color, bold, italic)
        char_format = self._formats.get(key)
        if char_format is None:
            background, _inline = code_colors()
            text = QGuiApplication.palette().color(QPalette.ColorRole.Text)
            char_format = QTextCharFormat()
            char_format.setForeground(readable(color, background.rgb(), text.rgb()))
            if bold:
                char_format.setFontWeight(QFont.Weight.Bold)
            if italic:
                char_format.setFontItalic(True)
            self._formats[key] = char_format
        return char_format

    def _apply_some(self) -> None:
        deadline = time.perf_counter() + APPLY_BUDGET_S
        if self._scans:
            self._scan_some(deadline)
        cursor = QTextCursor(self._document)
        last = self._document.characterCount() - 1
        cursor.beginEditBlock()
        while self._pending and time.perf_counter() < deadline:
            ticket, start, spans = self._pending[0]
            if not self._current(ticket):
                self._pending.popleft()
                continue
            while spans and time.perf_counter() < deadline:
                offset, length, color, bold, italic = spans.pop()
                position = start + offset
                if position + length <= last:
                    cursor.setPosition(position)
                    cursor.setPosition(position + length, _KEEP_ANCHOR)
                    cursor.mergeCharFormat(self._format(color, bold, italic))
            if not spans:
                self._pending.popleft()
        cursor.endEditBlock()
        if self._pending or self._scans:
            self._timer.start(0)


class _Scan:
    """A range of the document being read for its code runs, a slice per event-loop turn."""

    def __init__(self, ticket: tuple[int, int | None], start: int, end: int) -> None:
        self.ticket = ticket
        self.position = start
        self.end = end
        self._runs: list[CodeRun] = []
        self._lines: list[str] = []
        self._run_start = -1
        self._language = ""

    def add(self, block: QTextBlock) -> None:
        block_format = block.blockFormat()
        is_code = block_format.hasProperty(_CODE_FENCE)
        language = str(block_format.property(_LANGUAGE) or "") if is_code else ""
        if self._lines and (not is_code or language != self._language):
            self._close()
        if is_code:
            if not self._lines:
                self._run_start, self._language = block.position(), language
            self._lines.append(block.text())

    def _close(self) -> None:
        if self._language:
            self._runs.append(CodeRun(self._run_start, "\n".join(self._lines), self._language))
        self._lines = []

    def finish(self) -> list[CodeRun]:
        if self._lines:
            self._close()
        return self._runs
