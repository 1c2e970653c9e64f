"""A stdio MCP server with one tool that writes a file, for the sandbox tests.

Tools: write (writes ``text`` to ``path``; answers "wrote <path>", or the OS error as an error
result, e.g. "Read-only file system" inside the sandbox), pid.

Run: ``python writer_server.py``. The tests look at the file system afterwards, never only at
the answer.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("tebiki-writer")


@server.tool(description="Write text to a file (created or replaced).")
def write(path: str, text: str = "written by writer_server") -> str:
    try:
        Path(path).write_text(text)
    except OSError as exc:
        raise ToolError(f"cannot write {path}: {exc.strerror or exc}") from None
    return f"wrote {path}"


@server.tool(description="The server's process id (as the server sees it).")
def pid() -> str:
    return str(os.getpid())


if __name__ == "__main__":
    server.run("stdio")
