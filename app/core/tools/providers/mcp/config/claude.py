"""Importing MCP servers from Claude Desktop's ``claude_desktop_config.json``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.core.tools.providers.mcp.config.model import McpConfigError, McpServerConfig, ParsedConfig
from app.core.tools.providers.mcp.config.schema import parse_mcp_config


def claude_desktop_config_paths(platform: str | None = None,
                                environ: Mapping[str, str] | None = None,
                                home: Path | None = None) -> list[Path]:
    """Where Claude Desktop keeps its config on this platform, most likely first."""
    platform = platform or sys.platform
    environ = os.environ if environ is None else environ
    home = home or Path.home()
    name = Path("Claude") / "claude_desktop_config.json"
    if platform == "darwin":
        return [home / "Library" / "Application Support" / name]
    if platform.startswith("win"):
        appdata = environ.get("APPDATA")
        base = Path(appdata) if appdata else home / "AppData" / "Roaming"
        return [base / name]
    config_home = environ.get("XDG_CONFIG_HOME")
    paths = [Path(config_home) / name] if config_home else []
    default = home / ".config" / name
    if default not in paths:
        paths.append(default)
    return paths


def find_claude_desktop_config(**kwargs: Any) -> Path | None:
    for path in claude_desktop_config_paths(**kwargs):
        if path.is_file():
            return path
    return None


def read_claude_desktop_config(path: str | os.PathLike[str]) -> ParsedConfig:
    """Parse the ``mcpServers`` of a Claude Desktop config file (its other keys are ignored)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise McpConfigError([f"cannot read {path}: {exc.strerror or exc}"]) from None
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f" at line {exc.lineno}, column {exc.colno}" \
            if isinstance(exc, json.JSONDecodeError) else ""
        raise McpConfigError([f"{path} is not valid JSON{where}: "
                              f"{getattr(exc, 'msg', exc)}"]) from None
    if isinstance(data, Mapping) and "mcpServers" not in data:
        return ParsedConfig({}, [f"{path} has no MCP servers configured"])
    return parse_mcp_config(data, source=str(path))


def merge_servers(current: Mapping[str, McpServerConfig],
                  incoming: Mapping[str, McpServerConfig]) -> tuple[dict[str, McpServerConfig],
                                                                    list[str], list[str]]:
    """Add ``incoming`` servers whose names are free; returns (merged, added, skipped).

    An import never silently replaces a server the person already configured.
    """
    merged = dict(current)
    taken = {name.lower() for name in current}
    added, skipped = [], []
    for name, config in incoming.items():
        if name.lower() in taken:
            skipped.append(name)
            continue
        merged[name] = config
        taken.add(name.lower())
        added.append(name)
    return merged, added, skipped
