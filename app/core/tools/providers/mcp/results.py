"""MCP results and failures as text (and images) for the model (and the Settings tab)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from app.core.tools.base import PersonView, ProgressFn, ToolResult
from app.core.tools.images import ImagePart, image_part

log = logging.getLogger(__name__)


def _approx_bytes(b64: Any) -> int:
    return len(b64) * 3 // 4 if isinstance(b64, str) else 0


def content_to_parts(content: Sequence[Mapping[str, Any]], structured: Any = None
                     ) -> tuple[str, tuple[ImagePart, ...]]:
    """MCP content blocks as the text for the model plus the images that go with it.

    Each image is checked (app.core.tools.images) and named in the text where it was; one
    that cannot be passed on is replaced by a note saying why. What text cannot carry (audio,
    binary resources) is named, not dropped.

    ``structuredContent`` is sent once: as formatted JSON in place of a text block that
    serialises it (the spec asks servers to send both); otherwise the text stands for it, and
    the JSON follows only when there is no text or the text is a stub (see ``_stub_text``).
    Servers often repeat their text in the structure (server-filesystem's ``read_text_file``
    returns ``{"content": <the text>}``): sending both doubled the result and cut it early.
    """
    parts: list[str] = []
    images: list[ImagePart] = []
    structured_shown = structured is None
    text_chars = 0
    for block in content:
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text", ""))
            if not structured_shown and _serialises(text, structured):
                text, structured_shown = _pretty(structured), True
            elif not structured_shown and _wrapped_value(text, structured):
                structured_shown = True
            text_chars += len(text.strip())
            parts.append(text)
        elif kind == "image":
            parts.append(_add_image(images, block.get("mimeType"), block.get("data")))
        elif kind == "audio":
            mime = block.get("mimeType") or "unknown type"
            parts.append(f"[audio returned by the tool ({mime}, about "
                         f"{_approx_bytes(block.get('data'))} bytes); audio cannot be passed "
                         "to the model, so it is not shown]")
        elif kind == "resource":
            parts.append(_resource(block.get("resource"), images))
        elif kind == "resource_link":
            label = block.get("name") or block.get("title") or ""
            parts.append(f"[resource link {label} {block.get('uri', '?')}]".replace("  ", " "))
        else:
            parts.append(f"[a content block of type {kind!r} that Tebiki cannot show]")
    if not structured_shown and _stub_text(text_chars, structured):
        pretty = _pretty(structured)
        parts.append(f"[structured content]\n{pretty}" if parts else pretty)
    return "\n\n".join(parts), tuple(images)


def _add_image(images: list[ImagePart], mime: Any, data: Any) -> str:
    part = image_part(mime, data, already=len(images))
    if isinstance(part, str):
        return part
    images.append(part)
    return part.note(len(images))


def _resource(resource: Any, images: list[ImagePart]) -> str:
    if not isinstance(resource, Mapping):
        return "[an embedded resource without contents]"
    uri = resource.get("uri", "?")
    if "text" in resource:
        return f"[resource {uri}]\n{resource.get('text', '')}"
    mime = resource.get("mimeType") or "binary"
    if (text := blob_text(mime, resource.get("blob"))) is not None:
        return f"[resource {uri}]\n{text}"
    if isinstance(mime, str) and mime.startswith("image/"):
        return f"[resource {uri}] " + _add_image(images, mime, resource.get("blob"))
    return (f"[resource {uri} ({mime}, about {_approx_bytes(resource.get('blob'))} bytes) not "
            "shown: binary]")


# MIME types of text that are not text/*: JSON, XML, YAML, scripts… (and any +json/+xml).
_TEXT_APPLICATION_TYPES = frozenset({
    "application/json", "application/ld+json", "application/xml", "application/javascript",
    "application/ecmascript", "application/x-javascript", "application/yaml",
    "application/x-yaml", "application/toml", "application/x-toml", "application/sql",
    "application/graphql", "application/x-sh", "application/x-httpd-php", "application/csv",
    "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-tex",
    "application/rtf", "image/svg+xml",
})


def is_text_mime(mime: Any) -> bool:
    """Whether content of this MIME type is text (text/*, JSON, XML, YAML, +json, +xml…)."""
    if not isinstance(mime, str):
        return False
    base = mime.split(";", 1)[0].strip().lower()
    return (base.startswith("text/") or base in _TEXT_APPLICATION_TYPES
            or base.endswith(("+json", "+xml", "+yaml")))


def blob_text(mime: Any, blob: Any) -> str | None:
    """A resource blob as text when its MIME type is text and it decodes as UTF-8; else None
    (it is binary, or mislabelled)."""
    if not (is_text_mime(mime) and isinstance(blob, str)):
        return None
    try:
        return base64.b64decode(blob, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _serialises(text: str, structured: Any) -> bool:
    """Whether ``text`` is the JSON of ``structured`` (compared as values, not as text)."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        return bool(json.loads(stripped) == structured)
    except ValueError:
        return False


# Text this short ("ok", "{}", "Done.") cannot stand for a structured result.
STUB_TEXT_CHARS = 20
# Text this many times shorter than the structure's JSON is a placeholder ("See the result.").
PLACEHOLDER_RATIO = 4


def _stub_text(text_chars: int, structured: Any) -> bool:
    """Whether the result's text (``text_chars`` long in all) is too little to stand for
    ``structured``, so the JSON must be sent as well."""
    if text_chars < STUB_TEXT_CHARS:
        return True
    compact = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    return text_chars * PLACEHOLDER_RATIO < len(compact)


def _wrapped_value(text: str, structured: Any) -> bool:
    """Whether ``structured`` only wraps the value ``text`` shows: the SDKs put a tool's plain
    return value in ``{"result": value}`` beside the text, which repeats nothing new."""
    if not (isinstance(structured, dict) and list(structured) == ["result"]):
        return False
    value = structured["result"]
    stripped = text.strip()
    return stripped == str(value).strip() or _serialises(stripped, value) or \
        stripped == json.dumps(value, ensure_ascii=False)


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


class OutputSchemaMismatch(Exception):
    """The tool ran, but its ``structuredContent`` does not match the ``outputSchema`` it
    declared (``mcp.checked_session``); ``result`` is the SDK's CallToolResult."""

    def __init__(self, detail: str, result: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.result = result


def _wire_content(result: Any) -> tuple[list[dict[str, Any]], Any]:
    wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    content = [b for b in wire.get("content") or [] if isinstance(b, dict)]
    return content, wire


def schema_mismatch_result(exc: OutputSchemaMismatch, tool_name: str, server: str,
                           max_output_chars: int) -> ToolResult:
    """An error saying the tool ran and its structured result broke its declared schema,
    with the text (and images) it returned."""
    content, _wire = _wire_content(exc.result)
    text, images = content_to_parts(content)
    detail = exc.detail if len(exc.detail) <= 600 else exc.detail[:600] + "…"
    message = (f"{tool_name} ran on MCP server {server!r}, but its structured result did not "
               f"match the output schema the tool declares, so it cannot be relied on "
               f"({detail}).")
    if text.strip():
        message += f"\n\nThe text it returned:\n{text}"
    else:
        message += " It returned no text."
    return ToolResult(truncate(message, max_output_chars), True, images)


def call_result_to_tool_result(result: Any, tool_name: str, max_output_chars: int) -> ToolResult:
    """A ``tools/call`` answer (the SDK's CallToolResult) as a ToolResult. Content a server
    marks for the user only goes to the card, never to the model; content for the assistant
    only goes to the model, never to the card (``annotations.audience``)."""
    content, wire = _wire_content(result)
    structured = wire.get("structuredContent")
    for_model = [b for b in content if _meant_for(b, "assistant")]
    text, images = content_to_parts(for_model, structured)
    text = truncate(text, max_output_chars)
    for_person: PersonView | None = None
    if len(for_model) != len(content) or any(not _meant_for(b, "user") for b in content):
        shown, shown_images = content_to_parts([b for b in content if _meant_for(b, "user")],
                                               structured)
        for_person = PersonView(truncate(shown, max_output_chars), shown_images)
        if not text.strip() and shown.strip():  # the model still learns why it has nothing
            text = PERSON_ONLY_NOTE
    if wire.get("isError"):
        return ToolResult(text or f"{tool_name} reported an error without a message.",
                          True, images, for_person)
    return ToolResult(text, False, images, for_person)


# What the model gets in place of a result whose content was all for the person.
PERSON_ONLY_NOTE = ("[the tool's result was meant for the user only: it was shown to them "
                    "and not to you]")


def _meant_for(block: Mapping[str, Any], reader: str) -> bool:
    """Whether a content block is for ``reader`` ("user" or "assistant"): it is unless its
    ``annotations.audience`` lists readers and not this one. A malformed audience (not a
    list of strings) restricts nothing."""
    annotations = block.get("annotations")
    audience = annotations.get("audience") if isinstance(annotations, Mapping) else None
    if not isinstance(audience, list) or not audience or \
            not all(isinstance(a, str) for a in audience):
        return True
    return reader in audience


def truncate(text: str, limit: int) -> str:
    if limit <= 0 or len(text) <= limit:
        return text
    return (text[:limit] + f"\n\n[… output truncated: showing {limit:,} of {len(text):,} "
            "characters]")


def leaf_exception(exc: BaseException) -> BaseException:
    """The first real failure inside (nested) exception groups, which anyio task groups raise."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (inner or list(exc.exceptions))[0]
    return exc


def describe_exception(exc: BaseException) -> str:
    """The innermost useful message (anyio wraps failures in exception groups)."""
    exc = leaf_exception(exc)
    error = getattr(exc, "error", None)  # MCPError carries ErrorData
    message = getattr(error, "message", None) or str(exc)
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"program not found: {exc.filename}"
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}" + (f": {exc.filename}" if exc.filename else "")
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def progress_callback(report: ProgressFn
                      ) -> Callable[[float, float | None, str | None], Awaitable[None]]:
    """The SDK's (async) progress callback around a plain one. A failing listener must not
    break the call: its errors are logged and dropped."""
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        try:
            report(progress, total, message)
        except Exception:
            log.exception("progress listener failed")
    return on_progress
