"""MCP servers written with the SDK's server API, run as real subprocesses by the tests."""

from __future__ import annotations

import sys
from pathlib import Path

DEMO_SERVER = Path(__file__).with_name("demo_server.py")


def demo_server_entry(**extra: object) -> dict[str, object]:
    """A Claude Desktop style ``mcpServers`` entry that runs the demo server over stdio."""
    entry: dict[str, object] = {"command": sys.executable, "args": [str(DEMO_SERVER)]}
    entry.update(extra)
    return entry


QUIRKS_SERVER = Path(__file__).with_name("quirks_server.py")


def quirks_server_entry(*args: str) -> dict[str, object]:
    """An ``mcpServers`` entry for the quirks server (structured content breaking its schema,
    a JSON blob, a resource added late, log messages) over stdio."""
    return {"command": sys.executable, "args": [str(QUIRKS_SERVER), *args]}


MAILER_SERVER = Path(__file__).with_name("mailer_server.py")


def mailer_server_entry(outbox: Path) -> dict[str, object]:
    """An ``mcpServers`` entry for the mailer (an inbox carrying an injection, send_email
    writing to ``outbox``) over stdio."""
    return {"command": sys.executable, "args": [str(MAILER_SERVER), str(outbox)]}
