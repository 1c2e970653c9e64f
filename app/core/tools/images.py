"""Images in tool results: what a tool may hand the model besides text, validated once here.

A tool result carries at most ``MAX_IMAGES`` images of the types the Messages API accepts, each at
most ``MAX_IMAGE_BYTES`` decoded (the API's own per-image limit). Anything else (an unknown type,
broken base64, too big, one too many) becomes a short text note in the result instead, so a
server's bad image is something the model reads about, never a failed request or a crash.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

ALLOWED_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_IMAGES = 8


@dataclass(frozen=True)
class ImagePart:
    """One image of a tool result: ``data`` is base64 (as the API wants it), already checked."""

    media_type: str
    data: str = ""

    @property
    def size(self) -> int:
        """Decoded size in bytes (from the base64 length, without decoding)."""
        return len(self.data) * 3 // 4 - self.data[-2:].count("=")

    def raw(self) -> bytes:
        return base64.b64decode(self.data)

    def api_block(self) -> dict[str, Any]:
        """The Messages API image block."""
        return {"type": "image",
                "source": {"type": "base64", "media_type": self.media_type, "data": self.data}}

    def note(self, index: int) -> str:
        """The line that stands for the image in text (the audit, the card, providers that
        cannot take images)."""
        return f"[image {index}: {self.media_type}, {human_size(self.size)}]"


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def image_part(media_type: Any, data: Any, *, already: int = 0) -> ImagePart | str:
    """The checked image, or the note saying why it is not passed on. ``already``: how many
    images the result holds before this one (the count cap)."""
    mime = (media_type if isinstance(media_type, str) else "").strip().lower()
    if mime == "image/jpg":  # a common misspelling of the registered type
        mime = "image/jpeg"
    label = mime or "no type"
    if mime not in ALLOWED_IMAGE_TYPES:
        return (f"[an image of type {label!s} was returned; only PNG, JPEG, GIF and WebP can "
                "be passed on, so it is not shown]")
    if already >= MAX_IMAGES:
        return (f"[a further image ({label}) was returned; at most {MAX_IMAGES} images per "
                "result are passed on, so it is not shown]")
    if not isinstance(data, str) or not data:
        return f"[an image ({label}) was returned without data]"
    compact = "".join(data.split())  # base64 may be wrapped over lines
    if len(compact) * 3 // 4 > MAX_IMAGE_BYTES + 3:
        return (f"[an image ({label}, about {human_size(len(compact) * 3 // 4)}) was returned; "
                f"images over {human_size(MAX_IMAGE_BYTES)} are not passed on]")
    try:
        raw = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        return f"[an image ({label}) was returned with invalid base64 data, so it is not shown]"
    if not raw:
        return f"[an image ({label}) was returned without data]"
    if len(raw) > MAX_IMAGE_BYTES:
        return (f"[an image ({label}, {human_size(len(raw))}) was returned; images over "
                f"{human_size(MAX_IMAGE_BYTES)} are not passed on]")
    if not _looks_like(mime, raw):
        return (f"[an image said to be {label} was returned, but its data is not a {label} "
                "image, so it is not shown]")
    # Re-encoded: one canonical base64 (no line breaks), whatever the server sent.
    return ImagePart(mime, base64.b64encode(raw).decode("ascii"))


_MAGIC: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
}


def _looks_like(mime: str, raw: bytes) -> bool:
    """The data starts as its type says: the API rejects an image whose bytes are another
    format, which would fail the whole model turn."""
    if mime == "image/webp":
        return raw[:4] == b"RIFF" and raw[8:12] == b"WEBP"
    return raw.startswith(_MAGIC[mime])


def images_in(content: Any) -> tuple[ImagePart, ...]:
    """The images of a stored ``tool_result``'s content (a reloaded card's thumbnails). Not
    decoded here (a conversation may hold many): whoever shows them decodes off the GUI
    thread and copes with data that is not an image."""
    if not isinstance(content, list):
        return ()
    found: list[ImagePart] = []
    for block in content:
        source = block.get("source") if isinstance(block, dict) else None
        if (isinstance(block, dict) and block.get("type") == "image"
                and isinstance(source, dict) and isinstance(source.get("data"), str)
                and source.get("media_type") in ALLOWED_IMAGE_TYPES):
            found.append(ImagePart(source["media_type"], source["data"]))
    return tuple(found)
