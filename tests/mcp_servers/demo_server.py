"""A small MCP server over stdio (or streamable HTTP) for the MCP provider tests.

Tools: echo, add (read-only), fail (raises), crash (the process dies mid-call), slow (sleeps),
media (image + embedded resource blocks), pid, grow (adds a tool and announces the change).

Run: ``python demo_server.py`` (stdio) or ``python demo_server.py --http PORT`` (127.0.0.1).
It prints ``demo-server pid=<pid>`` to stderr at start so tests can check the process is gone.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import sys
from typing import Any

import mcp_types as types

# mcp 2.x renamed FastMCP to MCPServer (the same decorator API).
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("tebiki-demo")

READ_ONLY = types.ToolAnnotations(read_only_hint=True, destructive_hint=False)
DESTRUCTIVE = types.ToolAnnotations(destructive_hint=True)


@server.tool(description="Echo the text back.", annotations=READ_ONLY)
def echo(text: str) -> str:
    return text


@server.tool(description="Add two integers.", annotations=READ_ONLY)
def add(a: int, b: int) -> str:
    return str(a + b)


@server.tool(description="Always fails with an error result.", annotations=DESTRUCTIVE)
def fail(message: str = "boom") -> str:
    raise ToolError(message)


@server.tool(description="Write to stderr, then kill this server process mid-call.",
             annotations=DESTRUCTIVE)
def crash(code: int = 3) -> str:
    sys.stderr.write("demo-server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(code)


@server.tool(description="Sleep for the given number of seconds, then answer.")
async def slow(seconds: float = 30.0) -> str:
    sys.stderr.write(f"demo-server: sleeping {seconds}s\n")
    sys.stderr.flush()
    await asyncio.sleep(seconds)
    return f"slept {seconds}s"


@server.tool(description="Return an image and an embedded resource.")
def media() -> list[Any]:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
    return [
        types.TextContent(type="text", text="here is a picture"),
        types.ImageContent(type="image", data=png, mime_type="image/png"),
        types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
            uri="file:///notes.txt", mime_type="text/plain", text="resource body")),
    ]


@server.tool(description="The server's process id.", annotations=READ_ONLY)
def pid() -> str:
    return str(os.getpid())


@server.tool(description="Add a tool named 'extra' and notify the client.")
async def grow(ctx: Context) -> str:
    def extra() -> str:
        return "extra tool"

    server.add_tool(extra, name="extra", description="Added at run time.")
    await ctx.session.send_tool_list_changed()
    return "added"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, help="serve streamable HTTP on 127.0.0.1:PORT")
    parser.add_argument("--fail-start", action="store_true", help="exit before serving")
    parser.add_argument("--noise", type=int, default=0,
                        help="print this many non-JSON lines on stdout before serving")
    parser.add_argument("--label", action="append", default=[],
                        help="echoed to stderr as 'demo-server label: <value>'")
    args = parser.parse_args()
    sys.stderr.write(f"demo-server pid={os.getpid()}\n")
    sys.stderr.flush()
    if args.fail_start:
        sys.stderr.write("demo-server: missing DEMO_TOKEN, giving up\n")
        sys.exit(2)
    for label in args.label:
        sys.stderr.write(f"demo-server label: {label}\n")
    if "DEMO_LABEL" in os.environ:
        sys.stderr.write(f"demo-server env label: {os.environ['DEMO_LABEL']}\n")
    sys.stderr.flush()
    if args.noise:
        sys.stdout.write("".join(f"not json {i}\n" for i in range(args.noise)))
        sys.stdout.flush()
    if os.environ.get("DEMO_SECRET"):
        sys.stderr.write(f"demo-server: secret length {len(os.environ['DEMO_SECRET'])}\n")
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
