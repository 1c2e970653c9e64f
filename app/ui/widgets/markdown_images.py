"""Images in a model's Markdown are never loaded: ``![alt](url)`` becomes the text
"[image: alt]", linked to the URL (opened only through link_guard's rules). Loading them
would let an answer make the app fetch any URL (a tracking pixel, a request to a local
service) or read a local file (``file:`` images load without a network)."""

from __future__ import annotations

from PySide6.QtGui import (
    QGuiApplication,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)

_ALT_TEXT = QTextFormat.Property.ImageAltText
OBJECT_REPLACEMENT = "\ufffc"


def image_placeholder(alt: str) -> str:
    return f"[image: {alt}]" if alt else "[image]"


def replace_images_with_text(part: QTextDocument) -> None:
    """Swap every image in ``part`` (fresh from ``setMarkdown``) for its placeholder text."""
    if OBJECT_REPLACEMENT not in part.toRawText():
        return
    images: list[tuple[int, str, str]] = []  # (position, alt, url)
    block = part.begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            char_format = fragment.charFormat()
            if char_format.isImageFormat():
                alt = str(char_format.property(_ALT_TEXT) or "")
                url = char_format.toImageFormat().name()
                images += [(fragment.position() + i, alt, url) for i in range(fragment.length())]
            iterator += 1
        block = block.next()
    cursor = QTextCursor(part)
    for position, alt, url in reversed(images):  # from the end: positions before stay put
        cursor.setPosition(position)
        cursor.setPosition(position + 1, QTextCursor.MoveMode.KeepAnchor)
        text_format = QTextCharFormat()
        if url:
            text_format.setAnchor(True)
            text_format.setAnchorHref(url)
            text_format.setToolTip(url)
            # Drawn as Qt's reader draws a link (the palette's link colour, underlined).
            text_format.setForeground(QGuiApplication.palette().link())
            text_format.setFontUnderline(True)
        cursor.insertText(image_placeholder(alt), text_format)
