"""Files and images the person attaches to a prompt, as Messages API content blocks.

What a file is comes from its content, not its name: PNG, JPEG, GIF and WebP signatures make
an image (an ``image`` block, base64), ``%PDF-`` a PDF (a base64 ``document`` block), and
anything that decodes as UTF-8 without NUL bytes a text document (a ``document`` block with a
plain-text source and the file name as its title). Anything else is refused with a reason.

Limits keep a request within what the API takes and the stored conversation small (the blocks
are stored with the message, base64 included, so a conversation reloads and can be resent):

- an image's base64 must stay within the API's 5 MB per image, so at most 3.75 MB of file;
- a text file at most 200 KB, a PDF at most 4 MB;
- at most 10 attachments and 10 MB in all per message.

Reading is blocking (``read_attachment``): callers on the GUI thread run it in a worker.

``restore_attachments`` turns a stored prompt's blocks back into attachments (editing a sent
message puts them back on the tray); each one's ``block()`` is exactly the stored block.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from app.core.safe_read import (
    FileMissingError,
    FileTooLargeError,
    NotRegularFileError,
    UnsafeReadError,
    read_project_file,
)

Kind = Literal["image", "text", "pdf"]

MB = 1024 * 1024
# The API refuses an image whose base64 exceeds 5 MB; base64 is 4/3 of the bytes.
MAX_IMAGE_BYTES = 5 * MB * 3 // 4
MAX_TEXT_BYTES = 200 * 1024
MAX_PDF_BYTES = 4 * MB
MAX_COUNT = 10
MAX_TOTAL_BYTES = 10 * MB

_IMAGE_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
IMAGE_MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
# What the person sees for a media type on a chip.
_SHORT_TYPES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF",
                "image/webp": "WebP", "application/pdf": "PDF", "text/plain": "text"}


class AttachmentError(Exception):
    """A file that cannot be attached; the message says why, for the person."""


class AttachmentTooLarge(AttachmentError):
    """A file over its kind's limit; ``kind`` is "image", "PDF", "text file" or "file" (the
    UI may make a smaller copy of an image)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Attachment:
    """One attached file, read and checked."""

    name: str
    kind: Kind
    media_type: str
    data: bytes  # the file's bytes (text: UTF-8)

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def info(self) -> AttachmentInfo:
        return AttachmentInfo(self.name, self.kind, self.media_type, self.size)

    def block(self) -> dict[str, Any]:
        """The Messages API content block for this file."""
        if self.kind == "image":
            return {"type": "image", "source": {
                "type": "base64", "media_type": self.media_type,
                "data": base64.b64encode(self.data).decode("ascii")}}
        if self.kind == "pdf":
            return {"type": "document", "title": self.name, "source": {
                "type": "base64", "media_type": "application/pdf",
                "data": base64.b64encode(self.data).decode("ascii")}}
        return {"type": "document", "title": self.name, "source": {
            "type": "text", "media_type": "text/plain", "data": self.data.decode("utf-8")}}


@dataclass(frozen=True)
class AttachmentInfo:
    """What a stored block shows in the transcript: a chip, never the content."""

    name: str
    kind: Kind
    media_type: str
    size: int

    @property
    def label(self) -> str:
        return f"{self.name} ({describe(self.media_type, self.size)})"


def read_attachment(path: Path | str) -> Attachment:
    """Read and check the file at ``path`` (blocking). Raises ``AttachmentError``."""
    path = Path(path)
    name = path.name or str(path)
    limit = max(MAX_IMAGE_BYTES, MAX_PDF_BYTES, MAX_TEXT_BYTES)
    try:  # a FIFO or device is refused at once (never waited on); nothing over the limit read
        data = read_project_file(path, max_bytes=limit)
    except FileMissingError:
        raise AttachmentError(f"{name}: the file does not exist") from None
    except NotRegularFileError:
        raise AttachmentError(f"{name}: not a file") from None
    except FileTooLargeError:
        try:
            head, size = read_project_file(path, max_bytes=16, too_large="truncate"), \
                os.stat(path).st_size
        except OSError:
            head, size = b"", limit + 1
        raise _too_big(name, _kind_of(head) or "file", size) from None
    except UnsafeReadError as exc:
        raise AttachmentError(f"{name}: cannot be read ({exc.strerror or exc})") from None
    return attachment_from_bytes(name, data)


def attachment_from_bytes(name: str, data: bytes) -> Attachment:
    """Check ``data`` (a file's bytes, or image data pasted from the clipboard) and make it an
    attachment named ``name``. Raises ``AttachmentError``."""
    if not data:
        raise AttachmentError(f"{name}: the file is empty")
    media_type = image_media_type(data)
    if media_type is not None:
        if len(data) > MAX_IMAGE_BYTES:
            raise _too_big(name, "image", len(data))
        return Attachment(name, "image", media_type, data)
    if data.startswith(b"%PDF-"):
        if len(data) > MAX_PDF_BYTES:
            raise _too_big(name, "PDF", len(data))
        return Attachment(name, "pdf", "application/pdf", data)
    if b"\x00" in data[:8192]:
        raise AttachmentError(f"{name}: a binary file; only text files, PDFs and PNG, JPEG, "
                              "GIF or WebP images can be attached")
    if len(data) > MAX_TEXT_BYTES:
        raise _too_big(name, "text file", len(data))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise AttachmentError(f"{name}: not UTF-8 text; only text files, PDFs and PNG, JPEG, "
                              "GIF or WebP images can be attached") from None
    return Attachment(name, "text", "text/plain", text.encode("utf-8"))


def image_media_type(data: bytes) -> str | None:
    """The media type of an image the API takes, from its signature; None otherwise."""
    for signature, media_type in _IMAGE_SIGNATURES:
        if data.startswith(signature):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def limit_error(current: Sequence[Attachment], new: Attachment) -> str | None:
    """Why ``new`` cannot join ``current`` (the message's count and total limits), or None."""
    if len(current) >= MAX_COUNT:
        return f"{new.name}: at most {MAX_COUNT} attachments per message"
    total = sum(a.size for a in current) + new.size
    if total > MAX_TOTAL_BYTES:
        return (f"{new.name}: the attachments would come to {format_size(total)}; at most "
                f"{format_size(MAX_TOTAL_BYTES)} per message")
    return None


def content_blocks(attachments: Sequence[Attachment]) -> list[dict[str, Any]]:
    """The blocks for ``attachments``, in order (they go before the prompt's text, as the
    API's documentation advises for images and documents)."""
    return [a.block() for a in attachments]


def default_prompt(attachments: Sequence[Attachment]) -> str:
    """The text of a prompt that is only attachments: the API wants some text with them, and
    the transcript shows the prompt as a message."""
    return "Attached: " + ", ".join(a.name for a in attachments)


def attachment_info(block: Mapping[str, Any]) -> AttachmentInfo | None:
    """The chip of a stored ``image`` or ``document`` block (without decoding it), or None
    for any other block or a malformed one."""
    kind = block.get("type")
    source = block.get("source")
    if kind not in ("image", "document") or not isinstance(source, Mapping):
        return None
    media_type = str(source.get("media_type") or "")
    data = source.get("data")
    if not isinstance(data, str):
        return None
    base64_source = source.get("type") == "base64"
    size = _decoded_size(data) if base64_source else len(data.encode("utf-8"))
    title = block.get("title")
    if kind == "image":
        return AttachmentInfo(str(title) if title else "image", "image", media_type, size)
    info_kind: Kind = "pdf" if media_type == "application/pdf" else "text"
    return AttachmentInfo(str(title) if title else "document", info_kind, media_type, size)


def attachments_in(content: object) -> list[AttachmentInfo]:
    """The chips of a stored message's attachments."""
    if not isinstance(content, list):
        return []
    found = (attachment_info(b) for b in content if isinstance(b, Mapping))
    return [info for info in found if info is not None]


def attachment_from_block(block: Mapping[str, Any]) -> Attachment:
    """The attachment a stored ``image`` or ``document`` block was made from: its ``block()``
    is that block again. Raises ``AttachmentError`` for any other block, or one this app
    would not have made (another source, extra fields)."""
    kind = block.get("type")
    source = block.get("source")
    title = block.get("title")
    name = str(title) if title else ("image" if kind == "image" else "document")
    if kind not in ("image", "document") or not isinstance(source, Mapping):
        raise AttachmentError(f"a stored block of an unknown kind ({kind!r})")
    media_type, data = source.get("media_type"), source.get("data")
    base64_source = source.get("type") == "base64"
    attachment: Attachment | None = None
    if isinstance(data, str) and isinstance(media_type, str):
        if kind == "image" and base64_source and media_type in IMAGE_MEDIA_TYPES:
            attachment = Attachment(name, "image", media_type, _decoded(data, name))
        elif kind == "document" and base64_source and media_type == "application/pdf":
            attachment = Attachment(name, "pdf", media_type, _decoded(data, name))
        elif kind == "document" and source.get("type") == "text" and media_type == "text/plain":
            attachment = Attachment(name, "text", media_type, data.encode("utf-8"))
    # Anything but the block this app makes would be changed by sending it again: refused.
    if attachment is None or attachment.block() != dict(block):
        raise AttachmentError(f"{name}: a stored {kind} of a form that cannot be attached again")
    return attachment


def restore_attachments(content: object) -> tuple[list[Attachment | None], list[str]]:
    """A stored prompt's attachments, one per block ``attachments_in`` shows (None where it
    cannot be restored), and what could not be restored, for the person."""
    if not isinstance(content, list):
        return [], []
    restored: list[Attachment | None] = []
    problems: list[str] = []
    for block in content:
        if not isinstance(block, Mapping):
            problems.append("a damaged stored block")
            continue
        if block.get("type") == "text":
            continue
        try:
            attachment = attachment_from_block(block)
        except AttachmentError as exc:
            problems.append(str(exc))
            attachment = None
        if attachment_info(block) is not None:  # one slot per attachment the note shows
            restored.append(attachment)
    return restored, problems


def describe(media_type: str, size: int) -> str:
    return f"{_SHORT_TYPES.get(media_type, media_type or 'file')}, {format_size(size)}"


def format_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < MB:
        return f"{size / 1024:.0f} KB"
    return f"{size / MB:.1f} MB"


def _decoded_size(data: str) -> int:
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def _decoded(data: str, name: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise AttachmentError(f"{name}: its stored data is damaged (not base64)") from None


def _kind_of(head: bytes) -> str | None:
    if image_media_type(head) is not None:
        return "image"
    if head.startswith(b"%PDF-"):
        return "PDF"
    return None


def _too_big(name: str, what: str, size: int) -> AttachmentTooLarge:
    limits = {"image": MAX_IMAGE_BYTES, "PDF": MAX_PDF_BYTES, "text file": MAX_TEXT_BYTES}
    if what in limits:
        return AttachmentTooLarge(
            f"{name}: too large ({format_size(size)}); an attached {what} may be at most "
            f"{format_size(limits[what])}", what)
    return AttachmentTooLarge(
        f"{name}: too large ({format_size(size)}); attachments may be at most "
        f"{format_size(MAX_TEXT_BYTES)} (text), {format_size(MAX_IMAGE_BYTES)} (images) "
        f"or {format_size(MAX_PDF_BYTES)} (PDFs)", what)
