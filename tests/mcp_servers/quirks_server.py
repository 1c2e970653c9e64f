"""A stdio MCP server, written on the SDK's low-level API, that does what the reference servers
do not (or not on demand), for the MCP client tests:

- ``mismatch``: declares an output schema and returns structured content that breaks it;
- ``json_blob``: returns an embedded resource whose JSON text is sent as a base64 blob;
- ``add_resource``: the server starts with no resources; this adds one (a JSON blob) and sends
  ``notifications/resources/list_changed``;
- ``log``: sends one log message per level, filtered by the level ``logging/setLevel`` set
  (the server declares the logging capability); ``log_level`` answers that level.

Run: ``python quirks_server.py`` (stdio). ``--garbage N`` prints N lines that are not JSON-RPC
on stdout and exits with status 3 instead of serving.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import warnings
from typing import Any, ClassVar

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

try:  # imported by the tests, or run as a script from its folder
    from tests.mcp_servers.handshake_only import speak_handshake_era_only
except ModuleNotFoundError:
    from handshake_only import speak_handshake_era_only  # type: ignore[no-redef]

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
DATA_URI = "quirks://data.json"
DATA = {"answer": 42, "note": "text sent as a blob"}


class State:
    """What the one client of this process changed."""

    level: str | None = None
    resources: ClassVar[list[types.Resource]] = []


def _blob(value: Any) -> str:
    return base64.b64encode(json.dumps(value).encode()).decode()


TOOLS = [
    types.Tool(name="mismatch", description="Structured content that breaks its schema.",
               input_schema={"type": "object"},
               output_schema={"type": "object", "properties": {"count": {"type": "integer"}},
                              "required": ["count"]}),
    types.Tool(name="json_blob", description="An embedded JSON resource sent as a blob.",
               input_schema={"type": "object"}),
    types.Tool(name="add_resource", description="Add a resource and announce it.",
               input_schema={"type": "object"}),
    types.Tool(name="log", description="One log message per level.",
               input_schema={"type": "object"}),
    types.Tool(name="log_level", description="The level logging/setLevel set.",
               input_schema={"type": "object"}),
]


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "mismatch":
        return types.CallToolResult(content=[types.TextContent(type="text", text="counted: many")],
                                    structured_content={"count": "many"})
    if params.name == "json_blob":
        return types.CallToolResult(content=[types.EmbeddedResource(
            type="resource", resource=types.BlobResourceContents(
                uri="quirks://inline.json", mime_type="application/json", blob=_blob(DATA)))])
    if params.name == "add_resource":
        State.resources[:] = [types.Resource(uri=DATA_URI, name="data",
                                          mime_type="application/json")]
        await ctx.session.send_resource_list_changed()
        return _text("added")
    if params.name == "log":
        floor = LEVELS.index(State.level) if State.level in LEVELS else 0
        for level in LEVELS[:5]:
            if LEVELS.index(level) >= floor:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    await ctx.session.send_log_message(level, f"{level} message", "quirks")
        return _text("logged")
    if params.name == "log_level":
        return _text(State.level or "unset")
    raise ValueError(f"unknown tool {params.name}")


async def list_resources(_ctx: Any, _params: Any) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=State.resources)


async def read_resource(_ctx: Any, params: types.ReadResourceRequestParams
                        ) -> types.ReadResourceResult:
    return types.ReadResourceResult(contents=[types.BlobResourceContents(
        uri=str(params.uri), mime_type="application/json", blob=_blob(DATA))])


async def set_level(_ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
    State.level = params.level
    return types.EmptyResult()


def build() -> Server[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # logging is deprecated in the newest revision
        return Server("tebiki-quirks", on_list_tools=list_tools, on_call_tool=call_tool,
                      on_list_resources=list_resources, on_read_resource=read_resource,
                      on_set_logging_level=set_level)


async def serve() -> None:
    from mcp.server.lowlevel import NotificationOptions

    server = build()
    options = server.create_initialization_options(
        NotificationOptions(resources_changed=True))
    async with stdio_server() as (read, write):
        await server.run(read, write, options)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--garbage", type=int, default=0,
                        help="print this many non-JSON lines on stdout, then exit 3")
    args = parser.parse_args()
    if args.garbage:
        sys.stdout.write("".join(f"garbage line {i}\n" for i in range(args.garbage)))
        sys.stdout.flush()
        sys.stderr.write("quirks-server: refusing to serve\n")
        sys.exit(3)
    anyio.run(serve)


if __name__ == "__main__":
    speak_handshake_era_only()  # it notifies on its own (older revisions)
    main()
