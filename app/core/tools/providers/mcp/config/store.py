"""Storing MCP servers: public parts in the ``MCP_SERVERS`` setting, env/header values in the
keyring."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import replace

from app.core.secrets import (
    KEYRING_INSTALL_HINT,
    SecretStoreError,
    get_secret,
    keyring_failure,
    set_secret,
)
from app.core.settings_fields import MCP_SERVERS
from app.core.store.settings import SettingsRepository
from app.core.tools.providers.mcp.config.env import has_references
from app.core.tools.providers.mcp.config.model import (
    SECRET_PLACEHOLDER,
    McpConfigError,
    McpServerConfig,
    dump_mcp_config,
    dump_mcp_config_text,
)
from app.core.tools.providers.mcp.config.schema import parse_mcp_config

SecretGetter = Callable[[str], "str | None"]
SecretSetter = Callable[[str, "str | None"], None]


def _secret_name(server: str, kind: str, key: str) -> str:
    return f"mcp:{server}:{kind}:{key}"


def _keyring_unavailable(servers: Mapping[str, McpServerConfig],
                         writes: list[tuple[str, str | None]]) -> list[str]:
    """What to do when the keyring refuses: one line per value, naming the variable that a
    ``${VAR}`` reference would make Tebiki read, then how to get a keyring."""
    failure = keyring_failure()
    reason = f" ({failure})" if failure else ""
    needed = {secret for secret, value in writes if value is not None}
    lines = [f"The OS keyring is not available{reason}, so env and header values cannot be "
             "stored. Write each one as a ${VAR} reference to a variable set in Tebiki's "
             "environment (it is read when the server starts; it may sit inside a value, as in "
             "\"Bearer ${TOKEN}\"), or set up a keyring. " + KEYRING_INSTALL_HINT]
    for name, cfg in servers.items():
        for kind, values in (("env", cfg.env), ("header", cfg.headers)):
            for key in values:
                if _secret_name(name, kind, key) not in needed:
                    continue
                var = key if kind == "env" else re.sub(r"[^A-Za-z0-9]+", "_", key).upper()
                lines.append(f"mcpServers[{json.dumps(name, ensure_ascii=False)}] {kind} {key}: "
                             f"write \"{key}\": \"${{{var}}}\" and start Tebiki with {var} set "
                             "in its environment")
    return lines


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
        stored = self.settings.read(MCP_SERVERS)
        if not stored:
            return {}
        try:
            return parse_mcp_config(stored, source="the stored MCP configuration",
                                    keep_unusable_names=True).servers
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
        except SecretStoreError:
            # Not the keyring's own message: it names an "environment variable" made from the
            # keyring entry's name, which is no variable name and which nothing reads.
            raise McpConfigError(_keyring_unavailable(servers, writes)) from None
        self.settings.write(MCP_SERVERS, dump_mcp_config(public))

    def _split(self, server: str, old_name: str | None, kind: str,
               values: Mapping[str, str], writes: list[tuple[str, str | None]],
               wanted: set[str], errors: list[str]) -> dict[str, str]:
        public: dict[str, str] = {}
        for key, value in values.items():
            if has_references(value):
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
