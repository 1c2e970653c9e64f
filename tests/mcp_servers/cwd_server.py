"""A tiny stdio MCP server that tells where it runs, for the "servers follow the project" tests.

Tools: ``where`` (this process's working folder and pid) and ``hold`` (writes the ``started``
file, then answers only once the ``release`` file exists — a long call the test controls
without timing); the prompt ``here`` says the same as ``where``. Run: ``python cwd_server.py``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

# mcp 2.x renamed FastMCP to MCPServer (the same decorator API).
from mcp.server.mcpserver import MCPServer

server = MCPServer("tebiki-cwd")


def _here() -> str:
    return f"cwd={os.getcwd()} pid={os.getpid()}"


@server.tool(description="This server's working folder and process id.")
def where() -> str:
    return _here()


@server.tool(description="Write the 'started' file, wait for the 'release' file, then answer "
                         "with this server's working folder and process id.")
async def hold(started: str, release: str) -> str:
    Path(started).write_text("started")
    while not Path(release).exists():
        await asyncio.sleep(0.01)  # the test creates the file; this only polls for it
    return _here()


@server.prompt(description="This server's working folder and process id, as a prompt.")
def here() -> str:
    return _here()


if __name__ == "__main__":
    server.run("stdio")
