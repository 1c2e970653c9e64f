"""MCP resources and prompts, client side: listing and reading them on a running server, and
the per-server ``read_resource`` tool that lets the model follow a resource link a tool
returned (otherwise a dead end).

Every answer is turned into plain wire dicts (camelCase keys, as the protocol spells them);
every failure (server not running, timeout, an error answer, a malformed result) becomes an
``McpRequestError`` with a message naming the server, never an SDK exception.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from app.core.tools.base import ToolContext, ToolResult, ToolSpec
from app.core.tools.providers.mcp.results import blob_text, describe_exception, truncate
from app.core.tools.providers.mcp.revision import with_input
from app.core.tools.providers.mcp.tool_specs import spec_for_tool

if TYPE_CHECKING:
    from app.core.tools.providers.mcp.connection import McpConnection

MAX_PAGES = 50
READ_RESOURCE = "read_resource"


class McpRequestError(Exception):
    """A resources/prompts request that could not be answered; the message says why."""


class ResourceReader(Protocol):
    """Reads a resource of a server by name, on its current connection
    (``McpResourceQueries``); raises McpRequestError when it cannot."""

    async def read_resource(self, server: str, uri: str, *,
                            timeout_s: float | None = None) -> list[dict[str, Any]]: ...


def offers(conn: McpConnection, feature: str) -> bool:
    """Whether the server advertised ``feature`` ("resources", "prompts") at start."""
    return isinstance(conn.capabilities.get(feature), Mapping)


async def request(conn: McpConnection, what: str,
                  send: Callable[[Any], Awaitable[Any]], timeout_s: float) -> dict[str, Any]:
    """``send(session)`` on a running server, its result as a wire dict."""
    session = conn.session
    if session is None:
        raise McpRequestError(f"MCP server {conn.name!r} is not running ({conn.state}"
                              f"{': ' + conn.message if conn.message else ''}), so {what} "
                              "is not possible now.")
    try:
        with anyio.fail_after(timeout_s):
            result = await send(session)
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    except TimeoutError:
        raise McpRequestError(f"MCP server {conn.name!r} did not answer {what} within "
                              f"{timeout_s:g}s.") from None
    except Exception as exc:
        raise McpRequestError(f"MCP server {conn.name!r} could not answer {what}: "
                              f"{describe_exception(exc)}") from exc
    if not isinstance(wire, dict):
        raise McpRequestError(f"MCP server {conn.name!r} sent a malformed answer to {what}.")
    return wire


async def list_paged(conn: McpConnection, what: str, key: str, method: str,
                     timeout_s: float) -> list[dict[str, Any]]:
    """All items of a paginated list (``resources``, ``resourceTemplates``, ``prompts``)."""
    from app.core.tools.providers.mcp.transport import load_sdk

    sdk = await load_sdk()
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    for _page in range(MAX_PAGES):
        params = sdk.types.PaginatedRequestParams(cursor=cursor) if cursor else None

        async def send(session: Any, params: Any = params) -> Any:
            return await getattr(session, method)(params=params)

        wire = await request(conn, what, send, timeout_s)
        items += [item for item in wire.get(key) or [] if isinstance(item, dict)]
        cursor = wire.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    return items


async def list_resources(conn: McpConnection, timeout_s: float) -> list[dict[str, Any]]:
    if not offers(conn, "resources"):
        return []
    return await list_paged(conn, "resources/list", "resources", "list_resources", timeout_s)


async def list_resource_templates(conn: McpConnection,
                                  timeout_s: float) -> list[dict[str, Any]]:
    if not offers(conn, "resources"):
        return []
    return await list_paged(conn, "resources/templates/list", "resourceTemplates",
                            "list_resource_templates", timeout_s)


async def read_resource(conn: McpConnection, uri: str,
                        timeout_s: float) -> list[dict[str, Any]]:
    async def send(session: Any) -> Any:
        async def resend(responses: Any = None, state: str | None = None) -> Any:
            return await session.read_resource(uri, input_responses=responses,
                                               request_state=state, allow_input_required=True)

        return await with_input(session, await resend(), resend)

    wire = await request(conn, f"resources/read of {uri}", send, timeout_s)
    contents = wire.get("contents")
    if not isinstance(contents, list):
        raise McpRequestError(f"MCP server {conn.name!r} answered resources/read of {uri} "
                              "without contents.")
    if (session := conn.session) is not None:  # read now: fresh, and updates are heard
        with anyio.move_on_after(timeout_s):
            await conn.resource_updates.read(session, conn.capabilities, uri)
    return [item for item in contents if isinstance(item, dict)]


async def list_prompts(conn: McpConnection, timeout_s: float) -> list[dict[str, Any]]:
    if not offers(conn, "prompts"):
        return []
    return await list_paged(conn, "prompts/list", "prompts", "list_prompts", timeout_s)


async def get_prompt(conn: McpConnection, name: str, arguments: Mapping[str, Any],
                     timeout_s: float) -> dict[str, Any]:
    args = {str(k): str(v) for k, v in arguments.items()}

    async def send(session: Any) -> Any:
        async def resend(responses: Any = None, state: str | None = None) -> Any:
            return await session.get_prompt(name, args or None, input_responses=responses,
                                            request_state=state, allow_input_required=True)

        return await with_input(session, await resend(), resend)

    wire = await request(conn, f"prompts/get of {name!r}", send, timeout_s)
    if not isinstance(wire.get("messages"), list):
        raise McpRequestError(f"MCP server {conn.name!r} answered prompts/get of {name!r} "
                              "without messages.")
    return wire


def contents_to_text(uri: str, contents: Any) -> str:
    """A resources/read answer as text for the model; binary parts are described. A blob
    whose MIME type is text and that decodes as UTF-8 is text (``results.blob_text``)."""
    if not isinstance(contents, list) or not contents:
        return f"[resource {uri} is empty]"
    parts: list[str] = []
    for item in contents:
        if not isinstance(item, Mapping):
            continue
        where = item.get("uri") or uri
        text = item.get("text")
        if not isinstance(text, str):
            text = blob_text(item.get("mimeType"), item.get("blob"))
        if text is not None:
            parts.append(text if len(contents) == 1 else f"[{where}]\n{text}")
        else:
            blob = item.get("blob")
            size = len(blob) * 3 // 4 if isinstance(blob, str) else 0
            parts.append(f"[{where}: {item.get('mimeType') or 'binary'} content, about {size} "
                         "bytes; it is not text, so it is not shown]")
    return "\n\n".join(parts) or f"[resource {uri} has no readable content]"


def read_resource_spec(server: str, name: str, *, runs_programs: bool, sandboxed: bool,
                       network: bool = False, write_folders: tuple[str, ...] = ()) -> ToolSpec:
    """The model tool reading ``server``'s resources. It is a server request like the
    server's tools, so it carries the server's id (rules scoping the server cover it). It is
    read-only by construction (it only sends resources/read), so its spec says so in
    Tebiki's own word; what it sends goes to the server, and what it returns is still
    untrusted content."""
    tool = {
        "name": READ_RESOURCE,
        "description": (f"Read a resource of MCP server {server!r} by its URI, for example a "
                        "resource link in one of its tool results. Returns the resource's "
                        "text; binary content is only described."),
        "inputSchema": {"type": "object",
                        "properties": {"uri": {"type": "string",
                                               "description": "The resource's URI."}},
                        "required": ["uri"]},
        "annotations": {"readOnlyHint": True},
    }
    spec = spec_for_tool(server, name, tool, runs_programs=runs_programs, sandboxed=sandboxed,
                         network=network, write_folders=write_folders)
    return replace(spec, read_only=True)


class McpResourceTool:
    """``<server>__read_resource``: resources/read on the server's current connection."""

    def __init__(self, reader: ResourceReader, server: str, spec: ToolSpec) -> None:
        self._reader = reader
        self.server = server
        self.remote_name = READ_RESOURCE
        self.spec = spec

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        uri = input.get("uri")
        if not isinstance(uri, str) or not uri.strip():
            return ToolResult.error("read_resource needs a \"uri\": the resource's URI.")
        try:
            contents = await self._reader.read_resource(self.server, uri.strip(),
                                                        timeout_s=ctx.shell_timeout_s)
        except McpRequestError as exc:
            return ToolResult.error(str(exc))
        return ToolResult.ok(truncate(contents_to_text(uri, contents), ctx.max_output_bytes))

    def __repr__(self) -> str:
        return f"McpResourceTool({self.spec.name!r} → {self.server})"


# At most this many suggestions of a completion are offered (MCP allows a server 100).
MAX_COMPLETIONS = 100


async def complete_prompt_argument(conn: McpConnection, prompt: str, argument: str, value: str,
                                   context: Mapping[str, str], timeout_s: float) -> list[str]:
    """``completion/complete`` for one argument of a prompt: the server's suggestions for what
    was typed so far (``context``: the arguments already filled in). [] when the server did
    not declare completions."""
    if not offers(conn, "completions"):
        return []
    from app.core.tools.providers.mcp.transport import load_sdk

    types = (await load_sdk()).types

    async def send(session: Any) -> Any:
        return await session.complete(
            types.PromptReference(type="ref/prompt", name=prompt),
            {"name": argument, "value": value},
            {str(k): str(v) for k, v in context.items()} or None)

    wire = await request(conn, f"completion of {prompt!r}'s {argument!r}", send, timeout_s)
    completion = wire.get("completion")
    values = completion.get("values") if isinstance(completion, Mapping) else None
    if not isinstance(values, list):
        raise McpRequestError(f"MCP server {conn.name!r} answered completion/complete "
                              "without values.")
    return [v for v in values if isinstance(v, str)][:MAX_COMPLETIONS]
