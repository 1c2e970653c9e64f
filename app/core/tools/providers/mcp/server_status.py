"""What one MCP server's state is, as the Settings tab and the provider's queries report it.

Separate from ``mcp.connection`` because the UI (the servers model, the settings controller)
needs only this value type, not the machinery that starts and talks to servers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ServerState = Literal["stopped", "starting", "running", "failed", "disabled"]


@dataclass(frozen=True)
class ServerStatus:
    """What the Settings tab shows for one server."""

    name: str
    state: ServerState
    message: str = ""
    stderr_tail: str = ""
    tool_count: int = 0
    # Tools not offered to the model (they require MCP tasks); the message says so.
    hidden_tools: int = 0
    # The server answered 401 at start: it needs sign-in (OAuth) or a token in its headers.
    needs_auth: bool = False
