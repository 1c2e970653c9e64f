"""Touch-ups to a Markdown part rendered by ``QTextDocument.setMarkdown``, before it joins
the message's document (markdown_stream): only the new part is walked, so the cost stays
proportional to it while an answer streams.

- Headings: Qt's reader gives the heading's size and weight only to the text before the first
  inline span; after a code span, emphasis or a link the rest falls back to body text ("How"
  large, "`parse_date` reads a date" small). Every fragment of a heading block gets the
  heading's size and weight back; a code span keeps its monospace family (and drops its fixed
  point size, so it grows with the heading).
- Code: fenced blocks get a background, a small inset and a monospace font; inline code spans
  a lighter background. The colours come from the application palette, so dark mode works.
- Quotes: Qt's reader only indents a quote (40 px a level). Here a quote block is indented
  ``QUOTE_INDENT_PX`` a level and its text is muted; the bars left of it are painted by
  quote_bars (a QTextBlockFormat has no border of its own).
"""

from __future__ import annotations

import functools

from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QPalette,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)

from app.ui.contrast import mix

CODE_BLOCK_INSET_PX = 6.0      # left/right margin of a fenced block (inside the message)
_CODE_BLOCK_SHADE = 0.08       # how far the block background leans from base to text colour
_INLINE_CODE_SHADE = 0.06
QUOTE_INDENT_PX = 16.0         # a quote level's indent; its bar is drawn in the first pixels
_QUOTE_TEXT_SHADE = 0.3        # how far a quote's text leans from the text toward the base
_QUOTE_BAR_SHADE = 0.6
_QUOTE_LEVEL = QTextFormat.Property.BlockQuoteLevel
# Looked up once: a PySide enum member lookup costs as much as a small Qt call.
_SIZE_ADJUSTMENT = QTextFormat.Property.FontSizeAdjustment
_POINT_SIZE = QTextFormat.Property.FontPointSize
_CODE_FENCE = QTextFormat.Property.BlockCodeFence
_CODE_LANGUAGE = QTextFormat.Property.BlockCodeLanguage
_NO_MARKER = QTextBlockFormat.MarkerType.NoMarker
_BOLD = QFont.Weight.Bold
_KEEP_ANCHOR = QTextCursor.MoveMode.KeepAnchor


def code_colors(palette: QPalette | None = None) -> tuple[QColor, QColor]:
    """(fenced block background, inline code background): the palette's alternate base
    leaned a little toward the text colour, darker on a light theme and lighter on a dark one,
    so it stands out on the window, on the base and on a person's (alternate-base) bubble."""
    palette = palette or QGuiApplication.palette()
    base = palette.color(QPalette.ColorRole.AlternateBase)
    text = palette.color(QPalette.ColorRole.Text)
    return _shades(base.rgba(), text.rgba())


@functools.lru_cache(maxsize=8)
def _shades(base_rgba: int, text_rgba: int) -> tuple[QColor, QColor]:
    base, text = QColor.fromRgba(base_rgba), QColor.fromRgba(text_rgba)
    return mix(base, text, _CODE_BLOCK_SHADE), mix(base, text, _INLINE_CODE_SHADE)


def quote_colors(palette: QPalette | None = None) -> tuple[QColor, QColor]:
    """(quoted text, quote bar): the text colour leaned toward the base, so a quote reads as
    quieter than the answer on a light and on a dark palette, and its bar stays visible."""
    palette = palette or QGuiApplication.palette()
    text = palette.color(QPalette.ColorRole.Text)
    base = palette.color(QPalette.ColorRole.Base)
    return mix(text, base, _QUOTE_TEXT_SHADE), mix(text, base, _QUOTE_BAR_SHADE)


def quote_level(block_format: QTextBlockFormat) -> int:
    return int(block_format.property(_QUOTE_LEVEL) or 0)


def heading_size_adjustment(level: int) -> int:
    """Qt's Markdown reader: H1 +3 … H4 0 … H6 -2 (QTextFormat.FontSizeAdjustment)."""
    return 4 - level


def polish_markdown_part(part: QTextDocument, markdown: str,
                         palette: QPalette | None = None) -> None:
    """Apply the touch-ups above to ``part``, freshly rendered from ``markdown``."""
    block_background, inline_background = code_colors(palette)
    may_have_spans = "`" in markdown  # otherwise only headings need their fragments walked
    cursor = QTextCursor(part)
    # One edit block: without it every cursor move after a change lays the block out again.
    cursor.beginEditBlock()
    runs: list[tuple[int, int]] = []  # fenced code: (start of first line, end of last line)
    block = part.begin()
    while block.isValid():
        block_format = block.blockFormat()
        if block_format.hasProperty(_CODE_LANGUAGE) and not block_format.hasProperty(_CODE_FENCE):
            # An indented code block: Qt's reader gives it a language but no fence; marked as
            # fenced it is drawn, coloured (plain) and copied like any code block.
            block_format.setProperty(_CODE_FENCE, "`")
            cursor.setPosition(block.position())
            cursor.setBlockFormat(block_format)
        if "[" in markdown and block_format.marker() != _NO_MARKER and block.textList() is None:
            # Qt's reader leaves a task item's check box on the blocks after the list (a code
            # block drawn as "[x] plain"); only a list item has one.
            block_format.setMarker(_NO_MARKER)
            cursor.setPosition(block.position())
            cursor.setBlockFormat(block_format)
        if "\\|" in markdown and QTextCursor(block).currentTable() is not None:
            _unescape_pipes(cursor, block)
        if ">" in markdown and block_format.hasProperty(_QUOTE_LEVEL):
            _style_quote(cursor, block, quote_level(block_format), palette)
        if block_format.hasProperty(_CODE_FENCE):
            end = block.position() + block.length() - 1
            if runs and runs[-1][1] == block.position() - 1:
                runs[-1] = (runs[-1][0], end)
            else:
                runs.append((block.position(), end))
        else:
            level = block_format.headingLevel()
            if level or may_have_spans:
                _restyle_fragments(cursor, block, level, inline_background)
        block = block.next()
    for start, end in runs:
        _style_code_run(cursor, start, end, block_background)
    cursor.endEditBlock()


def _style_quote(cursor: QTextCursor, block: QTextBlock, level: int,
                 palette: QPalette | None) -> None:
    text_color, _bar = quote_colors(palette)
    block_format = QTextBlockFormat()
    # A list inside a quote keeps its own indent on top of this margin.
    block_format.setLeftMargin(QUOTE_INDENT_PX * level)
    block_format.setRightMargin(0)
    char_format = QTextCharFormat()
    char_format.setForeground(text_color)
    cursor.setPosition(block.position())
    cursor.setPosition(block.position() + block.length() - 1, _KEEP_ANCHOR)
    cursor.mergeBlockFormat(block_format)
    cursor.mergeCharFormat(char_format)


def _style_code_run(cursor: QTextCursor, start: int, end: int, background: QColor) -> None:
    # Each line of a fenced block is its own block: one merge gives them all the background,
    # inset and monospace font. No margin above or below: a long block is frozen in parts
    # (markdown_stream), and a margin there would cut its background in two; the paragraphs
    # around it keep their own margins.
    block_format = QTextBlockFormat()
    block_format.setBackground(background)
    # Inside a quote the code stays right of the quote's bars.
    level = quote_level(cursor.document().findBlock(start).blockFormat())
    block_format.setLeftMargin(CODE_BLOCK_INSET_PX + QUOTE_INDENT_PX * level)
    block_format.setRightMargin(CODE_BLOCK_INSET_PX)
    char_format = QTextCharFormat()
    char_format.setFontFamilies([_monospace_family(), "monospace"])
    char_format.setFontFixedPitch(True)
    cursor.setPosition(start)
    cursor.setPosition(end, _KEEP_ANCHOR)
    cursor.mergeBlockFormat(block_format)
    cursor.mergeCharFormat(char_format)


@functools.cache
def _monospace_family() -> str:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()


def _restyle_fragments(cursor: QTextCursor, block: QTextBlock, heading_level: int,
                       inline_background: QColor) -> None:
    """Heading size and weight on every fragment of a heading; a background on code spans."""
    changes: list[tuple[int, int, QTextCharFormat]] = []
    # textFormats(): the block's fragments in one call (much cheaper than its iterator).
    for fragment in block.textFormats():
        is_code = fragment.format.fontFixedPitch()
        if not heading_level and not is_code:
            continue
        char_format = QTextCharFormat(fragment.format)  # a copy: the range is temporary
        if heading_level:
            char_format.setProperty(_SIZE_ADJUSTMENT, heading_size_adjustment(heading_level))
            char_format.setFontWeight(_BOLD)
            if is_code:  # a fixed point size would keep the span at body size
                char_format.clearProperty(_POINT_SIZE)
        if is_code:
            char_format.setBackground(inline_background)
        changes.append((block.position() + fragment.start, fragment.length, char_format))
    for position, length, char_format in changes:
        cursor.setPosition(position)
        cursor.setPosition(position + length, _KEEP_ANCHOR)
        cursor.setCharFormat(char_format)


def _unescape_pipes(cursor: QTextCursor, block: QTextBlock) -> None:
    """GFM: in a table cell "\\|" is a pipe, also inside a code span (Qt keeps the backslash)."""
    text = block.text()
    index = text.rfind("\\|")
    while index >= 0:
        cursor.setPosition(block.position() + index)
        cursor.deleteChar()
        index = text.rfind("\\|", 0, index)
