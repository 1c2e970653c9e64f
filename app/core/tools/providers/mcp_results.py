"""MCP results and failures as text for the model (and the Settings tab)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any


def _approx_bytes(b64: Any) -> int:
    return len(b64) * 3 // 4 if isinstance(b64, str) else 0


def content_to_text(content: Sequence[Mapping[str, Any]], structured: Any = None) -> str:
    """MCP content blocks as text for the model; what text cannot carry is named, not dropped."""
    parts: list[str] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind in ("image", "audio"):
            mime = block.get("mimeType") or "unknown type"
            parts.append(f"[{kind} returned by the tool ({mime}, about "
                         f"{_approx_bytes(block.get('data'))} bytes); Tebiki passes only text to "
                         "the model, so it is not shown]")
        elif kind == "resource":
            resource = block.get("resource") or {}
            uri = resource.get("uri", "?")
            if "text" in resource:
                parts.append(f"[resource {uri}]\n{resource.get('text', '')}")
            else:
                mime = resource.get("mimeType") or "binary"
                parts.append(f"[resource {uri} ({mime}, about "
                             f"{_approx_bytes(resource.get('blob'))} bytes) not shown: binary]")
        elif kind == "resource_link":
            label = block.get("name") or block.get("title") or ""
            parts.append(f"[resource link {label} {block.get('uri', '?')}]".replace("  ", " "))
        else:
            parts.append(f"[a content block of type {kind!r} that Tebiki cannot show]")
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    return "\n\n".join(parts)


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
