"""What a server told us at start, reduced to what Tebiki uses: its capabilities, its tools (all
pages of ``tools/list``) and which of them the model can be offered, and how to name an HTTP
failure."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from http import HTTPStatus
from typing import Any

import anyio

log = logging.getLogger(__name__)


def server_capabilities(session: Any) -> dict[str, Any]:
    """The capabilities the server declared in the session's handshake (initialize or
    server/discover) as a wire dict ({} when unreadable)."""
    capabilities = getattr(session, "server_capabilities", None)
    try:
        wire = capabilities.model_dump(by_alias=True, mode="json", exclude_none=True) \
            if capabilities is not None else {}
    except Exception:
        return {}
    return wire if isinstance(wire, dict) else {}


def requires_tasks(tool: Mapping[str, Any]) -> bool:
    """Whether the tool can only run as an MCP task (``execution.taskSupport: "required"``):
    Tebiki does not implement tasks, so every plain call of it fails (-32601)."""
    execution = tool.get("execution")
    return isinstance(execution, Mapping) and execution.get("taskSupport") == "required"


def offered_tools(tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tools the model may be offered."""
    return [tool for tool in tools if not requires_tasks(tool)]


def hidden_tools_note(hidden: int) -> str:
    if hidden <= 0:
        return ""
    what = "1 tool" if hidden == 1 else f"{hidden} tools"
    return (f"{what} hidden: {'it requires' if hidden == 1 else 'they require'} MCP tasks, "
            "which Tebiki does not support")


def http_status_text(status: int) -> str:
    """``HTTP 404 Not Found``; "" for no status."""
    if not status:
        return ""
    try:
        return f"HTTP {status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


async def offers_resources(session: Any, capabilities: Mapping[str, Any]) -> bool:
    """Whether the server has resources to read: it advertised the capability and lists at
    least one resource or template (SDK servers advertise it even with none). Any failure
    means no: this only decides whether the model gets a ``read_resource`` tool."""
    if not isinstance(capabilities.get("resources"), Mapping):
        return False
    for method, field in (("list_resources", "resources"),
                          ("list_resource_templates", "resource_templates")):
        try:
            if getattr(await getattr(session, method)(), field, None):
                return True
        except Exception:
            continue
    return False


async def resources_now(session: Any, capabilities: Mapping[str, Any], server: str,
                        timeout_s: float) -> bool | None:
    """``offers_resources`` again, bounded by ``timeout_s`` (None when it took too long)."""
    try:
        with anyio.fail_after(timeout_s):
            return await offers_resources(session, capabilities)
    except TimeoutError:
        log.warning("MCP server %s: re-listing resources timed out", server)
        return None


MAX_TOOL_PAGES = 50


async def list_all_tools(session: Any, sdk: Any) -> list[dict[str, Any]]:
    """Every tool the server lists (wire dicts with a name), following ``nextCursor`` for at
    most ``MAX_TOOL_PAGES`` pages (a server that always answers with a cursor cannot loop)."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    for _page in range(MAX_TOOL_PAGES):
        params = sdk.types.PaginatedRequestParams(cursor=cursor) if cursor else None
        result = await session.list_tools(params=params)
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        tools += [t for t in wire.get("tools", []) if isinstance(t, dict) and t.get("name")]
        cursor = wire.get("nextCursor")
        if not cursor:
            break
    return tools
