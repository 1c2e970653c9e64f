"""The demo MCP server over streamable HTTP as a real subprocess on a fixed loopback port,
restartable on that port (a server that dies and comes back, a project switch)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time

from tests.mcp_servers import DEMO_SERVER

WAIT_S = 30.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class HttpDemo:
    """The demo server over streamable HTTP on a fixed port, restartable on that port."""

    def __init__(self, *extra: str) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._extra = extra
        self.process: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(DEMO_SERVER), "--http", str(self.port), *self._extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                assert self.process.poll() is None, "the HTTP demo server exited"
                assert time.monotonic() < deadline, "the HTTP demo server did not start"
                await asyncio.sleep(0.05)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
