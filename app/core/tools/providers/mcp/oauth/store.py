"""Where OAuth sign-ins of MCP servers are kept: the OS keyring, one pair of entries per server.

``mcp:<server>:oauth:tokens`` holds the tokens, when the access token expires and the
metadata discovered while signing in (so a refresh after a restart reaches the right token
endpoint); ``mcp:<server>:oauth:client`` holds the dynamic client registration. Two entries,
not one, because some keyrings cap an entry's size and tokens can be long.

Each record names the server URL it was made for: after the URL changes, the old sign-in is
not sent to the new address. Without a keyring records live in this object's memory for the
session (``in_memory`` becomes True, and sign-in says so).

Every method may block on the keyring: call them from a worker thread.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from app.core.secrets import SecretStoreError
from app.core.tools.providers.mcp.config.model import McpServerConfig

log = logging.getLogger(__name__)

SecretGetter = Callable[[str], "str | None"]
SecretSetter = Callable[[str, "str | None"], None]


def secret_name(server: str, part: str) -> str:
    return f"mcp:{server}:oauth:{part}"


class OAuthRecordStore:
    def __init__(self, get_secret_fn: SecretGetter, set_secret_fn: SecretSetter) -> None:
        self._get = get_secret_fn
        self._set = set_secret_fn
        self._memory: dict[str, str] = {}
        self._has_tokens: dict[str, bool] = {}
        self._lock = threading.Lock()
        self.in_memory = False

    # -- records ----------------------------------------------------------------------------

    def load(self, server: str, part: str, url: str) -> dict[str, Any] | None:
        """The stored record for ``url``; None when there is none, it is unreadable, or it
        was made for another URL."""
        name = secret_name(server, part)
        with self._lock:
            raw = self._memory.get(name)
        if raw is None:
            raw = self._get(name)
        record: dict[str, Any] | None = None
        if raw:
            try:
                loaded = json.loads(raw)
                record = loaded if isinstance(loaded, dict) else None
            except ValueError:
                log.warning("MCP server %s: the stored OAuth %s is unreadable; ignoring it",
                            server, part)
        if record is None or record.get("url") != url:
            record = None
        if part == "tokens":
            self._has_tokens[server] = record is not None
        return record

    def save(self, server: str, part: str, url: str, record: dict[str, Any]) -> None:
        name = secret_name(server, part)
        text = json.dumps({**record, "url": url}, separators=(",", ":"))
        try:
            self._set(name, text)
            with self._lock:
                self._memory.pop(name, None)
        except SecretStoreError:
            # No keyring: keep it for this session only, rather than failing the sign-in.
            with self._lock:
                self._memory[name] = text
            self.in_memory = True
        if part == "tokens":
            self._has_tokens[server] = True

    def clear(self, server: str) -> None:
        for part in ("tokens", "client"):
            name = secret_name(server, part)
            with self._lock:
                self._memory.pop(name, None)
            try:
                self._set(name, None)
            except SecretStoreError:
                pass  # nothing can be stored there, so nothing is
        self._has_tokens[server] = False

    def known_tokens(self, server: str) -> bool:
        return self._has_tokens.get(server, False)

    # -- the loopback redirect --------------------------------------------------------------

    def redirect_port(self, config: McpServerConfig) -> int | None:
        """The port of the registered redirect URI, so a new sign-in can reuse the client
        registration (servers compare redirect URIs exactly)."""
        record = self.load(config.name, "client", config.url or "")
        uris = ((record or {}).get("client") or {}).get("redirect_uris") or []
        try:
            return urlsplit(str(uris[0])).port if uris else None
        except ValueError:
            return None

    def forget_client_unless_redirect(self, config: McpServerConfig, redirect_uri: str) -> None:
        """Drop a client registration made for another redirect URI: it would be refused."""
        record = self.load(config.name, "client", config.url or "")
        if record is None:
            return
        uris = [str(u) for u in ((record.get("client") or {}).get("redirect_uris") or [])]
        if redirect_uri not in uris:
            name = secret_name(config.name, "client")
            with self._lock:
                self._memory.pop(name, None)
            try:
                self._set(name, None)
            except SecretStoreError:
                pass
