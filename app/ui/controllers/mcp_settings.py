"""What Settings → MCP servers does, without its widgets: load and validate server configs,
save them (secrets go to the OS keyring), import Claude Desktop's config, and apply the result
to the running servers.

Saving touches the keyring, so it runs in a worker thread; server starts are coroutines on the
qasync loop (``ensure_future``). Nothing here blocks the GUI while a server takes seconds to start.
Every outcome is reported through ``message``; the server list lives in ``model``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, Signal

from app.core.tools.providers.mcp.config.claude import (
    claude_desktop_config_paths,
    find_claude_desktop_config,
    merge_servers,
    read_claude_desktop_config,
)
from app.core.tools.providers.mcp.config.model import (
    McpConfigError,
    McpServerConfig,
    dump_mcp_config_text,
)
from app.core.tools.providers.mcp.config.schema import parse_mcp_config
from app.core.tools.providers.mcp.config.store import McpConfigStore
from app.core.tools.providers.mcp.oauth.errors import SignInError, uses_oauth
from app.core.tools.providers.mcp.provider import McpProvider
from app.core.tools.providers.mcp.server_log import ServerLog
from app.core.tools.providers.mcp.server_status import ServerStatus
from app.ui.models.mcp_servers_model import McpServersModel

log = logging.getLogger(__name__)

NEW_SERVER_TEMPLATE = """{
  "mcpServers": {
    "my-server": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/path/to/folder"],
      "env": {}
    }
  }
}
"""


@dataclass(frozen=True)
class EditorCheck:
    """The verdict on an editor's text: the servers it defines, or why it cannot be saved."""

    servers: dict[str, McpServerConfig] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def check_servers_text(text: str, taken_names: Iterable[str]) -> EditorCheck:
    """Parse ``{"mcpServers": {...}}`` text; names clash case-insensitively with ``taken_names``
    because permission rules and tool ids match server names that way."""
    taken = {name.lower() for name in taken_names}
    try:
        parsed = parse_mcp_config(text)
    except McpConfigError as exc:
        return EditorCheck(errors=list(exc.errors))
    errors = [] if parsed.servers else ["Add at least one server inside \"mcpServers\"."]
    errors += [f"A server named {name!r} already exists; choose another name."
               for name in parsed.servers if name.lower() in taken]
    if errors:
        return EditorCheck(errors=errors, warnings=list(parsed.warnings))
    return EditorCheck(servers=dict(parsed.servers), warnings=list(parsed.warnings))


def install_mcp_sign_in(provider: McpProvider | None) -> None:
    """Let HTTP servers sign in through the person's web browser (OAuth): the provider's
    ``McpOAuth`` (created here when the services did not) opens URLs with the desktop."""
    if provider is None:
        return
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    from app.core.tools.providers.mcp.oauth.sign_in import McpOAuth

    def open_in_browser(url: str) -> bool:
        return QDesktopServices.openUrl(QUrl(url))

    if provider.oauth is None:
        provider.oauth = McpOAuth()
    assert provider.oauth is not None
    provider.oauth.open_browser = open_in_browser


class McpSettingsController(QObject):
    message = Signal(str, bool)  # text, is it an error
    # A server's status or sign-in state changed (Sign in / Sign out may change enablement).
    server_changed = Signal(str)
    _status_changed = Signal(str)

    def __init__(self, store: McpConfigStore, provider: McpProvider,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.provider = provider
        self.model = McpServersModel(self)
        self._servers: dict[str, McpServerConfig] = store.load_public()
        # Strong references: the loop keeps only weak ones to tasks.
        self._tasks: set[asyncio.Future[Any]] = set()
        # Provider listeners may fire on any thread; the signal hops to ours.
        self._status_changed.connect(self._on_status_changed)
        # The provider outlives this controller: unsubscribe when it goes away.
        unsubscribe = provider.subscribe(self._status_changed_from_provider)
        self.destroyed.connect(lambda *_: unsubscribe())
        self.refresh()

    # -- reading -----------------------------------------------------------------------------

    def status(self, name: str) -> ServerStatus | None:
        try:
            return self.provider.server_status(name)
        except KeyError:  # saved but not loaded by the provider (yet)
            return None

    def server_log(self, name: str) -> ServerLog | None:
        """The server's log messages and level; None when the provider does not have it."""
        try:
            return self.provider.server_log(name)
        except KeyError:
            return None

    def tools_of(self, name: str) -> list[str]:
        return [t.spec.name for t in self.provider.tools() if t.server == name]

    def refresh(self) -> None:
        self.model.update(self._servers, {s.name: s for s in self.provider.statuses()})

    # -- editing -----------------------------------------------------------------------------

    def editor_text(self, name: str | None) -> str:
        """What the editor starts with: the server ``name`` (secrets masked), or a template."""
        if name is None:
            return NEW_SERVER_TEMPLATE
        return dump_mcp_config_text({name: self._servers[name]})

    def check(self, text: str, editing: str | None) -> EditorCheck:
        """Validate editor text; the server being edited may keep its own name."""
        return check_servers_text(text, (n for n in self._servers if n != editing))

    def save_edit(self, servers: Mapping[str, McpServerConfig],
                  editing: str | None) -> asyncio.Future[Any]:
        """Add ``servers``, or replace ``editing`` with them in its place in the list."""
        updated: dict[str, McpServerConfig] = {}
        for name, config in self._servers.items():
            if name == editing:
                updated.update(servers)
            else:
                updated[name] = config
        updated.update(servers)
        # One server under a new name is a rename: its stored secrets move with it.
        renamed = {new: editing for new in servers} \
            if editing is not None and editing not in servers and len(servers) == 1 else {}
        verb = "Saved" if editing else "Added"
        return self.apply(updated, f"{verb} {', '.join(servers)}.", renamed)

    def remove(self, name: str) -> asyncio.Future[Any]:
        remaining = {n: c for n, c in self._servers.items() if n != name}
        self._say(f"Removed {name}. Applying…")
        return self._spawn(self._remove(name, remaining))

    async def _remove(self, name: str, remaining: dict[str, McpServerConfig]) -> None:
        await self._save_and_apply(remaining, f"Removed {name}.", {})
        oauth = self.provider.oauth
        if oauth is not None and name not in self.provider.server_names():
            await oauth.sign_out(name)  # its sign-in goes with it, like its other secrets

    def restart(self, name: str) -> asyncio.Future[Any] | None:
        """Restart a loaded, enabled server; otherwise say why not and return None."""
        config = self._servers.get(name)
        if config is not None and config.disabled:
            self._say(f"{name} is disabled: edit it and remove \"disabled\" first.")
            return None
        if name not in self.provider.server_names():
            self._say(f"{name} is not loaded yet; wait for the change to be applied.")
            return None
        self._say(f"Restarting {name}…")
        return self._spawn(self._restart(name))

    # -- signing in (HTTP servers with OAuth) -------------------------------------------------

    def _oauth_server(self, name: str) -> bool:
        config = self._servers.get(name)
        return config is not None and uses_oauth(config) and self.provider.oauth is not None \
            and name in self.provider.server_names()

    def can_sign_in(self, name: str) -> bool:
        """Relevant when the server answered 401 and no sign-in is under way."""
        status = self.status(name)
        oauth = self.provider.oauth
        return self._oauth_server(name) and status is not None and status.needs_auth \
            and oauth is not None and not oauth.signing_in(name)

    def can_sign_out(self, name: str) -> bool:
        """Relevant when a sign-in is known (or under way: signing out cancels it)."""
        oauth = self.provider.oauth
        return self._oauth_server(name) and oauth is not None and \
            (oauth.signed_in(name) or oauth.signing_in(name))

    def sign_in(self, name: str) -> asyncio.Future[Any] | None:
        """Open the browser to sign in; the server restarts once signed in."""
        if not self._oauth_server(name):
            self._say(f"{name} does not sign in with OAuth (only HTTP servers without their "
                      "own Authorization header do).")
            return None
        self._say(f"Signing in to {name}: finish in your web browser…")
        return self._spawn(self._sign_in(name))

    async def _sign_in(self, name: str) -> None:
        try:
            message = await self.provider.sign_in(name)
        except SignInError as exc:
            self._say(str(exc), error=True)
            return
        state = self.provider.status(name)[0]
        self._say(f"{message} {name}: {state}.", error=state == "failed")

    def sign_out(self, name: str) -> asyncio.Future[Any] | None:
        if not self._oauth_server(name):
            return None
        return self._spawn(self._sign_out(name))

    async def _sign_out(self, name: str) -> None:
        await self.provider.sign_out(name)
        self._say(f"Signed out of {name}; its tokens were deleted.")

    async def _restart(self, name: str) -> None:
        await self.provider.restart(name)
        state = self.provider.status(name)[0]
        self._say(f"{name}: {state}.", error=state == "failed")

    # -- import ------------------------------------------------------------------------------

    @staticmethod
    def claude_desktop_paths() -> list[Path]:
        return list(claude_desktop_config_paths())

    def import_start_dir(self) -> str:
        """Where a file chooser for imports opens: Claude Desktop's folder when there is one."""
        return next((str(p.parent) for p in claude_desktop_config_paths() if p.parent.is_dir()),
                    str(Path.home()))

    def find_claude_desktop_config(self) -> Path | None:
        """Claude Desktop's config at its usual place; when there is none, the message says
        where it looked and the caller asks for the file."""
        found = find_claude_desktop_config()
        if found is None:
            self._say("Claude Desktop's configuration was not found at "
                      + " or ".join(str(p) for p in claude_desktop_config_paths())
                      + ". Choose the file instead.")
        return found

    def import_file(self, path: Path) -> asyncio.Future[Any] | None:
        """Add the servers of a Claude Desktop style file, never replacing one by the same name.
        None when nothing was added (the message says why)."""
        try:
            parsed = read_claude_desktop_config(path)
        except McpConfigError as exc:
            self._say("Not imported: " + "\n".join(exc.errors), error=True)
            return None
        merged, added, skipped = merge_servers(self._servers, parsed.servers)
        notes = [f"Skipped {', '.join(skipped)}: a server with that name exists already."] \
            if skipped else []
        notes += parsed.warnings
        if not added:
            self._say("\n".join([f"Nothing imported from {path}.", *notes]))
            return None
        return self.apply(merged, "\n".join([f"Imported {', '.join(added)} from {path}.",
                                             *notes]))

    # -- applying ----------------------------------------------------------------------------

    def apply(self, servers: Mapping[str, McpServerConfig], message: str,
              renamed: Mapping[str, str] | None = None) -> asyncio.Future[Any]:
        """Save ``servers`` and make the provider match them, without blocking the GUI."""
        self._say(f"{message} Applying…")
        return self._spawn(self._save_and_apply(dict(servers), message, dict(renamed or {})))

    async def _save_and_apply(self, servers: dict[str, McpServerConfig], message: str,
                              renamed: dict[str, str]) -> None:
        try:
            await asyncio.to_thread(self.store.save, servers, renamed)
            loaded = await asyncio.to_thread(self.store.load)
        except McpConfigError as exc:
            self._say("Not saved: " + "\n".join(exc.errors), error=True)
            return
        if self._alive():
            self._servers = self.store.load_public()
            self.refresh()
        await self.provider.apply_config(loaded)
        failed = [s.name for s in self.provider.statuses()
                  if s.name in servers and s.state == "failed"]
        suffix = f" Failed to start: {', '.join(failed)} (select it to see why)." \
            if failed else ""
        self._say(message + suffix, error=bool(failed))

    def _alive(self) -> bool:
        # Background work may finish after the dialog (and this controller) is gone.
        return shiboken6.isValid(self)

    def _say(self, text: str, error: bool = False) -> None:
        if self._alive():
            self.message.emit(text, error)

    def _status_changed_from_provider(self, server: str) -> None:
        if self._alive():
            self._status_changed.emit(server)

    def _on_status_changed(self, server: str) -> None:
        self.refresh()
        self.server_changed.emit(server)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Future[Any]:
        future = asyncio.ensure_future(coro)
        self._tasks.add(future)
        future.add_done_callback(self._task_done)
        return future

    def _task_done(self, future: asyncio.Future[Any]) -> None:
        self._tasks.discard(future)
        if not future.cancelled() and future.exception() is not None:
            exc = future.exception()
            log.error("MCP settings action failed", exc_info=exc)
            self._say(f"Failed: {type(exc).__name__}: {exc}", error=True)
