"""MCP server configuration: the Claude Desktop ``mcpServers`` JSON shape, validated, and stored.

Accepted shape (what Claude Desktop's ``claude_desktop_config.json`` holds; other top-level keys
of that file are ignored)::

    {"mcpServers": {
        "<name>": {"command": "npx", "args": ["-y", "pkg"], "env": {"TOKEN": "..."}},
        "<name>": {"url": "https://host/mcp", "headers": {"Authorization": "Bearer ..."}}
    }}

Tebiki extensions, ignored by Claude Desktop: ``"type"`` (``"stdio"`` or ``"http"``; inferred
from command/url when absent), ``"cwd"``, ``"timeout"`` (seconds per tool call; otherwise the
tool's configured ``shell_timeout_s`` applies) and ``"disabled": true``. Keys that other clients
use to auto-approve tools (``autoApprove``, ``alwaysAllow``) are dropped with a warning: only
Tebiki's permission rules decide whether a call runs.

Secrets: env and header *values* often hold tokens, and secrets never go into SQLite.
``McpConfigStore`` therefore writes every env/header value to the OS keyring (one entry per
value) and keeps only ``SECRET_PLACEHOLDER`` in the settings table; the editor shows the
placeholder and keeps the stored value while it is left untouched. A value written as a pure
``${VAR}`` reference is not a secret: it stays in the settings and is expanded from Tebiki's own
environment when the server starts (the way to go when no keyring is available).
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from app.core.secrets import SecretStoreError, get_secret, set_secret
from app.core.store.settings import SettingsRepository

SETTINGS_KEY = "mcp.servers"
SECRET_PLACEHOLDER = "<stored in keyring>"
MAX_SERVER_NAME_LENGTH = 64
# Server ids that already mean something to the permission rules and the audit log: the
# built-ins, the CLI and custom-tool providers ("project" is the project's tools.toml), the
# agent loop's id for a tool it cannot find.
RESERVED_SERVER_NAMES = frozenset({"builtin", "cli", "custom", "project", "unknown", "mcp"})
_ENV_REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_TRANSPORTS = {"stdio": "stdio", "http": "http", "streamable-http": "http",
               "streamableHttp": "http", "streamable_http": "http"}
_KNOWN_KEYS = frozenset({"command", "args", "env", "cwd", "url", "headers", "type", "timeout",
                         "disabled"})
_AUTO_APPROVE_KEYS = frozenset({"autoApprove", "alwaysAllow", "auto_approve"})

Transport = Literal["stdio", "http"]


class McpConfigError(ValueError):
    """The configuration cannot be used; ``errors`` lists every problem, each with its place."""

    def __init__(self, errors: Iterable[str]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


@dataclass(frozen=True)
class McpServerConfig:
    """One server entry. ``name`` is the server id that permission rules are scoped to."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float | None = None
    disabled: bool = False

    @property
    def transport(self) -> Transport:
        return "stdio" if self.command is not None else "http"

    def summary(self) -> str:
        """One line for lists: the command line or the URL."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return self.url or ""

    def to_json(self) -> dict[str, Any]:
        """The entry in Claude Desktop's shape (plus Tebiki's optional keys when set)."""
        entry: dict[str, Any] = {}
        if self.command is not None:
            entry["command"] = self.command
            entry["args"] = list(self.args)
            if self.env:
                entry["env"] = dict(self.env)
            if self.cwd:
                entry["cwd"] = self.cwd
        else:
            entry["type"] = "http"
            entry["url"] = self.url
            if self.headers:
                entry["headers"] = dict(self.headers)
        if self.timeout_s is not None:
            entry["timeout"] = self.timeout_s
        if self.disabled:
            entry["disabled"] = True
        return entry


@dataclass(frozen=True)
class ParsedConfig:
    servers: dict[str, McpServerConfig]
    warnings: list[str] = field(default_factory=list)


def dump_mcp_config(servers: Mapping[str, McpServerConfig]) -> dict[str, Any]:
    return {"mcpServers": {name: cfg.to_json() for name, cfg in servers.items()}}


def dump_mcp_config_text(servers: Mapping[str, McpServerConfig]) -> str:
    return json.dumps(dump_mcp_config(servers), indent=2, ensure_ascii=False)


def parse_mcp_config(data: str | bytes | Mapping[str, Any], *,
                     source: str = "the configuration") -> ParsedConfig:
    """Validate ``{"mcpServers": {...}}`` (text or already decoded); raise McpConfigError listing
    every problem, so the person can fix them all at once."""
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
    errors: list[str] = []
    warnings: list[str] = []
    servers: dict[str, McpServerConfig] = {}
    lowered: dict[str, str] = {}
    for name, entry in servers_json.items():
        where = f"mcpServers[{json.dumps(name, ensure_ascii=False)}]"
        before = len(errors)
        _check_name(name, where, errors)
        other = lowered.get(str(name).lower())
        if other is not None:
            errors.append(f"{where}: the name differs from {other!r} only by case; server ids "
                          "must be unique ignoring case")
        lowered[str(name).lower()] = str(name)
        if not isinstance(entry, Mapping):
            errors.append(f"{where}: must be an object with \"command\" (stdio) or \"url\" (HTTP)")
            continue
        config = _parse_entry(str(name), entry, where, errors, warnings)
        if config is not None and len(errors) == before:
            servers[str(name)] = config
    if errors:
        raise McpConfigError(errors)
    return ParsedConfig(servers, warnings)


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
    for key in entry:
        if key in _AUTO_APPROVE_KEYS:
            warnings.append(f"{where}.{key} is ignored: Tebiki never auto-approves from a server "
                            "config; add a permission rule for server id "
                            f"{name!r} instead")
        elif key not in _KNOWN_KEYS:
            warnings.append(f"{where}.{key} is not used by Tebiki and was dropped")
    transport: str | None = None
    if "type" in entry:
        kind = entry["type"]
        if kind == "sse":
            errors.append(f"{where}.type: the legacy SSE transport is not supported; use a "
                          "streamable HTTP endpoint (\"type\": \"http\") or a stdio command")
            return None
        if not isinstance(kind, str) or kind not in _TRANSPORTS:
            errors.append(f"{where}.type: must be \"stdio\" or \"http\", not {kind!r}")
            return None
        transport = _TRANSPORTS[kind]
    has_command, has_url = "command" in entry, "url" in entry
    if has_command and has_url:
        errors.append(f"{where}: has both \"command\" and \"url\"; keep one")
        return None
    if not has_command and not has_url:
        errors.append(f"{where}: needs \"command\" (a program to run over stdio) or \"url\" "
                      "(a streamable HTTP endpoint)")
        return None
    if (transport == "stdio" and has_url) or (transport == "http" and has_command):
        given = '"url"' if has_url else '"command"'
        errors.append(f"{where}: \"type\": {entry['type']!r} does not match {given}")
        return None
    timeout = _parse_timeout(entry.get("timeout"), f"{where}.timeout", errors)
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        errors.append(f"{where}.disabled: must be true or false")
        disabled = False
    if has_command:
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
        return McpServerConfig(name=name, command=command, args=tuple(args), env=env,
                               cwd=cwd, timeout_s=timeout, disabled=disabled)
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
    return McpServerConfig(name=name, url=url.strip(), headers=headers, timeout_s=timeout,
                           disabled=disabled)


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


# -- ${VAR} references ------------------------------------------------------------------------


def env_reference(value: str) -> str | None:
    """The variable name when ``value`` is exactly ``${NAME}``, else None."""
    match = _ENV_REFERENCE.match(value)
    return match.group(1) if match else None


def resolve_values(values: Mapping[str, str], what: str,
                   environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Expand ``${VAR}`` values from Tebiki's environment; refuse unreadable keyring values.

    Raises McpConfigError naming every value that cannot be provided, so a server never starts
    with a silently empty token.
    """
    environ = os.environ if environ is None else environ
    out: dict[str, str] = {}
    errors: list[str] = []
    for key, value in values.items():
        ref = env_reference(value)
        if ref is not None:
            if ref not in environ:
                errors.append(f"{what} {key} refers to ${{{ref}}}, which is not set in Tebiki's "
                              "environment")
                continue
            out[key] = environ[ref]
        elif value == SECRET_PLACEHOLDER:
            errors.append(f"{what} {key} is stored in the OS keyring, but it could not be read "
                          "(is the keyring unlocked?); enter the value again in Settings → MCP "
                          "servers")
        else:
            out[key] = value
    if errors:
        raise McpConfigError(errors)
    return out


# -- Claude Desktop --------------------------------------------------------------------------


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


# -- storage -----------------------------------------------------------------------------------

SecretGetter = Callable[[str], "str | None"]
SecretSetter = Callable[[str, "str | None"], None]


def _secret_name(server: str, kind: str, key: str) -> str:
    return f"mcp:{server}:{kind}:{key}"


class McpConfigStore:
    """Loads and saves the servers: public parts in the settings table, values in the keyring.

    ``load`` and ``save`` may block on the keyring: call them from a worker thread in the UI.
    """

    def __init__(self, settings: SettingsRepository, *,
                 get_secret_fn: SecretGetter = get_secret,
                 set_secret_fn: SecretSetter = set_secret) -> None:
        self.settings = settings
        self._get_secret = get_secret_fn
        self._set_secret = set_secret_fn

    def load_public(self) -> dict[str, McpServerConfig]:
        """The servers as stored, secret values shown as SECRET_PLACEHOLDER (no keyring I/O)."""
        stored = self.settings.get(SETTINGS_KEY)
        if not stored:
            return {}
        try:
            return parse_mcp_config(stored, source="the stored MCP configuration").servers
        except McpConfigError:
            # Written by us, so only a hand-edited database gets here; keep the app usable.
            return {}

    def editor_text(self) -> str:
        return dump_mcp_config_text(self.load_public())

    def load(self) -> dict[str, McpServerConfig]:
        """The servers with their secret values read from the keyring (placeholder kept when a
        value cannot be read; the server then fails to start with a message saying so)."""
        servers = self.load_public()
        return {name: self._with_secrets(cfg) for name, cfg in servers.items()}

    def save(self, servers: Mapping[str, McpServerConfig],
             renamed: Mapping[str, str] | None = None) -> None:
        """Store ``servers``: new values into the keyring, placeholders keep the stored value.

        ``renamed`` maps a new server name to its old one, so a renamed server keeps its
        stored values. Raises McpConfigError when a placeholder has no stored value or the
        keyring refuses.
        """
        renamed = renamed or {}
        previous = self.load_public()
        errors: list[str] = []
        public: dict[str, McpServerConfig] = {}
        writes: list[tuple[str, str | None]] = []
        wanted: set[str] = set()
        for name, cfg in servers.items():
            old = renamed.get(name)
            env = self._split(name, old, "env", cfg.env, writes, wanted, errors)
            headers = self._split(name, old, "header", cfg.headers, writes, wanted, errors)
            public[name] = replace(cfg, env=env, headers=headers)
        if errors:
            raise McpConfigError(errors)
        for name, cfg in previous.items():
            for kind, values in (("env", cfg.env), ("header", cfg.headers)):
                for key, value in values.items():
                    secret = _secret_name(name, kind, key)
                    if value == SECRET_PLACEHOLDER and secret not in wanted:
                        writes.append((secret, None))
        try:
            for secret, secret_value in writes:
                self._set_secret(secret, secret_value)
        except SecretStoreError as exc:
            raise McpConfigError([f"{exc} Or write env/header values as ${{VAR}} references "
                                  "to variables set in Tebiki's environment."]) from None
        self.settings.set(SETTINGS_KEY, dump_mcp_config(public))

    def _split(self, server: str, old_name: str | None, kind: str,
               values: Mapping[str, str], writes: list[tuple[str, str | None]],
               wanted: set[str], errors: list[str]) -> dict[str, str]:
        public: dict[str, str] = {}
        for key, value in values.items():
            if env_reference(value) is not None:
                public[key] = value
                continue
            secret = _secret_name(server, kind, key)
            wanted.add(secret)
            if value == SECRET_PLACEHOLDER:
                if self._get_secret(secret) is not None:
                    pass
                elif old_name is not None and \
                        (moved := self._get_secret(_secret_name(old_name, kind, key))):
                    writes.append((secret, moved))
                else:
                    errors.append(f"mcpServers[{json.dumps(server)}] {kind} {key}: no value is "
                                  f"stored for it; replace {SECRET_PLACEHOLDER!r} with the value")
            else:
                writes.append((secret, value))
            public[key] = SECRET_PLACEHOLDER
        return public

    def _with_secrets(self, cfg: McpServerConfig) -> McpServerConfig:
        def fill(kind: str, values: Mapping[str, str]) -> dict[str, str]:
            out = {}
            for key, value in values.items():
                if value == SECRET_PLACEHOLDER:
                    value = self._get_secret(_secret_name(cfg.name, kind, key)) or value
                out[key] = value
            return out

        return replace(cfg, env=fill("env", cfg.env), headers=fill("header", cfg.headers))
