"""MCP server configuration: the ``mcpServers`` entries, validated (see ``mcp.config``).

This module checks the text of a configuration and builds the entries; what an entry is
(``mcp.config.model``) and how its ``${VAR}`` references expand when a server starts
(``mcp.config.expand``) are modules of their own.
"""

from __future__ import annotations

import json
import math
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from app.core.tools.providers.mcp.config.expand import reference_warnings
from app.core.tools.providers.mcp.config.model import (
    McpConfigError,
    McpSandbox,
    McpServerConfig,
    ParsedConfig,
    UrlType,
)

MAX_SERVER_NAME_LENGTH = 64
# Server ids that already mean something to the permission rules and the audit log: the
# built-ins, the CLI and custom-tool providers ("project" is the project's tools.toml), the
# agent loop's id for a tool it cannot find.
RESERVED_SERVER_NAMES = frozenset({"builtin", "cli", "custom", "project", "unknown", "mcp"})
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_TRANSPORTS = {"stdio": "stdio", "http": "http", "streamable-http": "http",
               "streamableHttp": "http", "streamable_http": "http", "sse": "http"}
_KNOWN_KEYS = frozenset({"command", "args", "env", "cwd", "url", "headers", "type", "timeout",
                         "disabled", "sandbox"})
_SANDBOX_KEYS = frozenset({"network", "write_folders"})
_AUTO_APPROVE_KEYS = frozenset({"autoApprove", "alwaysAllow", "auto_approve"})


def parse_mcp_config(data: str | bytes | Mapping[str, Any], *,
                     source: str = "the configuration",
                     keep_unusable_names: bool = False) -> ParsedConfig:
    """Validate ``{"mcpServers": {...}}`` (text or already decoded); raise McpConfigError listing
    every problem, so the person can fix them all at once.

    ``keep_unusable_names``: for a configuration stored before names had to be valid rule
    server ids, such a name is not an error; the entry is kept with ``problem`` set (so it is
    shown as failed with what to do, instead of vanishing) and a warning."""
    servers_json = _servers_object(data, source)
    errors: list[str] = []
    warnings: list[str] = []
    servers: dict[str, McpServerConfig] = {}
    names = _ServerNames(keep_unusable_names)
    for name, entry in servers_json.items():
        where = f"mcpServers[{json.dumps(name, ensure_ascii=False)}]"
        before = len(errors)
        problem = names.check(name, where, errors)
        if not isinstance(entry, Mapping):
            errors.append(f"{where}: must be an object with \"command\" (stdio) or \"url\" (HTTP)")
            continue
        config = _parse_entry(str(name), entry, where, errors, warnings)
        if config is not None and len(errors) == before:
            if problem is not None:
                warnings.append(f"{where}: {problem}")
                config = replace(config, problem=problem)
            servers[str(name)] = config
    if errors:
        raise McpConfigError(errors)
    for config in servers.values():
        if not config.disabled:
            warnings += reference_warnings(config)
    return ParsedConfig(servers, warnings)


def _servers_object(data: str | bytes | Mapping[str, Any], source: str) -> Mapping[str, Any]:
    """The ``mcpServers`` object of the configuration (decoded first when it is text)."""
    if isinstance(data, bytes | str):
        text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
        if not text.strip():
            raise McpConfigError([f"{source} is empty; expected {{\"mcpServers\": {{...}}}}"])
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise McpConfigError([f"{source} is not valid JSON: {exc.msg} at line {exc.lineno}, "
                                  f"column {exc.colno}"]) from None
    if not isinstance(data, Mapping):
        raise McpConfigError([f"{source} must be a JSON object like {{\"mcpServers\": {{...}}}}"])
    if "mcpServers" not in data:
        hint = ""
        if data and all(isinstance(v, Mapping) and ("command" in v or "url" in v)
                        for v in data.values()):
            hint = " (it looks like the inside of it: wrap it in {\"mcpServers\": ...})"
        raise McpConfigError([f"{source} has no \"mcpServers\" object{hint}"])
    servers_json = data["mcpServers"]
    if not isinstance(servers_json, Mapping):
        raise McpConfigError(["mcpServers must be an object mapping server names to entries"])
    return servers_json


class _ServerNames:
    """The server names of one configuration, checked one by one; remembers the names seen
    (server ids must be unique ignoring case)."""

    def __init__(self, keep_unusable: bool) -> None:
        self.keep_unusable = keep_unusable
        self.lowered: dict[str, str] = {}

    def check(self, name: Any, where: str, errors: list[str]) -> str | None:
        """Adds the name's errors to ``errors``; returns why permission rules could not name
        this server (an error too, unless such names are kept), or None."""
        _check_name(name, where, errors)
        # (Leading/trailing spaces and control characters are refused by _check_name already.)
        problem = server_name_problem(name) \
            if isinstance(name, str) and name.strip() and name == name.strip() else None
        if problem is not None and not self.keep_unusable:
            errors.append(f"{where}: {problem}")
        other = self.lowered.get(str(name).lower())
        if other is not None:
            errors.append(f"{where}: the name differs from {other!r} only by case; server ids "
                          "must be unique ignoring case")
        self.lowered[str(name).lower()] = str(name)
        return problem


# Characters a permission rule's server_id refuses (app.core.permissions.rules._check_text):
# control, format (invisible), surrogate, private-use and unassigned code points, and every
# separator (spaces, line and paragraph separators). A configured name must be a valid rule
# server id, or "Always allow" for its tools could never be saved.
_RULE_REFUSED_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Cn")


def _refused_in_rules(ch: str) -> bool:
    category = unicodedata.category(ch)
    return category in _RULE_REFUSED_CATEGORIES or category.startswith("Z")


def suggested_server_name(name: str) -> str:
    """``name`` with every run of characters rules refuse turned into ``-``."""
    out: list[str] = []
    for ch in name:
        if not _refused_in_rules(ch):
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-")[:MAX_SERVER_NAME_LENGTH] or "server"


def server_name_problem(name: str) -> str | None:
    """Why permission rules could not name this server (None when they can); the message says
    how to rename it. Control characters are refused separately by the config check."""
    bad = [ch for ch in name if _refused_in_rules(ch) and not (ord(ch) < 32 or ord(ch) == 127)]
    if not bad:
        return None
    ch = bad[0]
    what = "a space" if ch == " " else f"the character U+{ord(ch):04X} " \
        f"({unicodedata.name(ch, unicodedata.category(ch))})"
    return (f"the server name {name!r} contains {what}; permission rules name a server by an "
            "id without spaces or invisible characters, so \"Always allow\" could never be "
            f"saved for its tools. Rename it, e.g. to {suggested_server_name(name)!r}")


def _check_name(name: Any, where: str, errors: list[str]) -> None:
    if not isinstance(name, str) or not name.strip():
        errors.append(f"{where}: the server name must not be empty")
        return
    if name != name.strip():
        errors.append(f"{where}: the server name must not start or end with spaces")
    if len(name) > MAX_SERVER_NAME_LENGTH:
        errors.append(f"{where}: the server name is longer than {MAX_SERVER_NAME_LENGTH} "
                      "characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        errors.append(f"{where}: the server name contains control characters")
    if name.lower() in RESERVED_SERVER_NAMES:
        errors.append(f"{where}: {name!r} is reserved (Tebiki's own tools use this server "
                      "id, so rules for them would apply to this server); choose another name")


def _parse_entry(name: str, entry: Mapping[str, Any], where: str, errors: list[str],
                 warnings: list[str]) -> McpServerConfig | None:
    _warn_unused_keys(name, entry, where, warnings)
    transport = _transport(entry, where, errors)
    if transport is None:
        return None
    timeout = _parse_timeout(entry.get("timeout"), f"{where}.timeout", errors)
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        errors.append(f"{where}.disabled: must be true or false")
        disabled = False
    if transport == "stdio":
        return _stdio_server(name, entry, where, errors, timeout, disabled)
    return _http_server(name, entry, where, errors, timeout, disabled)


def _warn_unused_keys(name: str, entry: Mapping[str, Any], where: str,
                      warnings: list[str]) -> None:
    for key in entry:
        if key in _AUTO_APPROVE_KEYS:
            warnings.append(f"{where}.{key} is ignored: Tebiki never auto-approves from a server "
                            "config; add a permission rule for server id "
                            f"{name!r} instead")
        elif key not in _KNOWN_KEYS:
            warnings.append(f"{where}.{key} is not used by Tebiki and was dropped")


def _transport(entry: Mapping[str, Any], where: str, errors: list[str]) -> str | None:
    """The transport: "stdio" (a command) or "http" (a URL), agreeing with ``type`` when it
    is given; None (with the error added) when the entry is neither, both, or contradicts its
    type."""
    transport: str | None = None
    if "type" in entry:
        kind = entry["type"]
        if not isinstance(kind, str) or kind not in _TRANSPORTS:
            errors.append(f"{where}.type: must be \"stdio\", \"http\" or \"sse\", not {kind!r}")
            return None
        transport = _TRANSPORTS[kind]
    has_command, has_url = "command" in entry, "url" in entry
    if has_command and has_url:
        errors.append(f"{where}: has both \"command\" and \"url\"; keep one")
        return None
    if not has_command and not has_url:
        errors.append(f"{where}: needs \"command\" (a program to run over stdio) or \"url\" "
                      "(a streamable HTTP or legacy SSE endpoint)")
        return None
    if (transport == "stdio" and has_url) or (transport == "http" and has_command):
        given = '"url"' if has_url else '"command"'
        errors.append(f"{where}: \"type\": {entry['type']!r} does not match {given}")
        return None
    return "stdio" if has_command else "http"


def _stdio_server(name: str, entry: Mapping[str, Any], where: str, errors: list[str],
                  timeout: float | None, disabled: bool) -> McpServerConfig:
    command = entry["command"]
    if not isinstance(command, str) or not command.strip():
        errors.append(f"{where}.command: must be a non-empty string (the program to run)")
        command = ""
    elif "\0" in command:
        errors.append(f"{where}.command: contains a NUL character")
    args = _string_list(entry.get("args", []), f"{where}.args", errors)
    env = _string_map(entry.get("env", {}), f"{where}.env", errors, _ENV_NAME,
                      "an environment variable name (letters, digits, _)")
    cwd = entry.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not cwd.strip()):
        errors.append(f"{where}.cwd: must be a non-empty string (a folder)")
        cwd = None
    if "headers" in entry:
        errors.append(f"{where}.headers: only HTTP servers (with \"url\") take headers; "
                      "pass settings to a stdio server through \"env\"")
    sandbox = _parse_sandbox(entry.get("sandbox"), f"{where}.sandbox", errors)
    return McpServerConfig(name=name, command=command, args=tuple(args), env=env,
                           cwd=cwd, timeout_s=timeout, disabled=disabled, sandbox=sandbox)


def _http_server(name: str, entry: Mapping[str, Any], where: str, errors: list[str],
                 timeout: float | None, disabled: bool) -> McpServerConfig | None:
    url = entry["url"]
    if not isinstance(url, str) or not url.strip():
        errors.append(f"{where}.url: must be a non-empty string")
        return None
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        errors.append(f"{where}.url: must be an http:// or https:// URL, not {url!r}")
    headers = _string_map(entry.get("headers", {}), f"{where}.headers", errors, _HEADER_NAME,
                          "an HTTP header name")
    for key in ("args", "env", "cwd"):
        if key in entry:
            errors.append(f"{where}.{key}: only stdio servers (with \"command\") take {key}")
    if "sandbox" in entry:
        errors.append(f"{where}.sandbox: only stdio servers (with \"command\") run in the "
                      "sandbox; an HTTP server is not a program Tebiki starts")
    kind = entry.get("type")
    url_type: UrlType | None = "sse" if kind == "sse" else "http" if kind is not None else None
    return McpServerConfig(name=name, url=url.strip(), headers=headers, url_type=url_type,
                           timeout_s=timeout, disabled=disabled)


def _parse_sandbox(value: Any, where: str, errors: list[str]) -> McpSandbox | None:
    """``true`` / ``false`` / ``{"network": bool, "write_folders": [folders]}``."""
    if value is None or value is False:
        return None
    if value is True:
        return McpSandbox()
    if not isinstance(value, Mapping):
        errors.append(f"{where}: must be true, false or an object like "
                      "{\"network\": false, \"write_folders\": [\"~/notes\"]}")
        return None
    for key in value:
        if key not in _SANDBOX_KEYS:
            errors.append(f"{where}.{key}: unknown key; the sandbox takes \"network\" "
                          "(true or false) and \"write_folders\" (a list of folders)")
    network = value.get("network", False)
    if not isinstance(network, bool):
        errors.append(f"{where}.network: must be true or false")
        network = False
    folders = _string_list(value.get("write_folders", []), f"{where}.write_folders", errors)
    checked: list[str] = []
    for i, folder in enumerate(folders):
        if not folder.strip():
            errors.append(f"{where}.write_folders[{i}]: must not be empty")
        elif not os.path.isabs(os.path.expanduser(folder)):
            errors.append(f"{where}.write_folders[{i}]: {folder!r} must be an absolute "
                          "folder (or start with ~)")
        else:
            checked.append(folder)
    return McpSandbox(network=network, write_folders=tuple(checked))


def _parse_timeout(value: Any, where: str, errors: list[str]) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or \
            not math.isfinite(value) or value <= 0 or value > 24 * 3600:
        errors.append(f"{where}: must be a number of seconds between 0 and 86400")
        return None
    return float(value)


def _string_list(value: Any, where: str, errors: list[str]) -> list[str]:
    if not isinstance(value, list):
        errors.append(f"{where}: must be a list of strings")
        return []
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            errors.append(f"{where}[{i}]: must be a string, not {json.dumps(item)} (quote it)")
        elif "\0" in item:
            errors.append(f"{where}[{i}]: contains a NUL character")
        else:
            out.append(item)
    return out


def _string_map(value: Any, where: str, errors: list[str], key_pattern: re.Pattern[str],
                key_meaning: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        errors.append(f"{where}: must be an object of string values")
        return {}
    out = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key_pattern.match(key):
            errors.append(f"{where}: {key!r} is not {key_meaning}")
        elif not isinstance(item, str):
            errors.append(f"{where}.{key}: must be a string, not {json.dumps(item)} (quote it)")
        elif "\0" in item or "\n" in item or "\r" in item:
            errors.append(f"{where}.{key}: must not contain NUL or line breaks")
        else:
            out[key] = item
    return out
