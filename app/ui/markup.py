"""Text put into Qt rich-text labels: escaped, so a tool's or a server's words stay text."""

from __future__ import annotations

__all__ = ["escape"]


def escape(text: str) -> str:
    """``&``, ``<`` and ``>`` as entities (quotes are harmless in label text)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
