"""Signing in to HTTP MCP servers with OAuth (authorization code + PKCE, via the MCP SDK).

Who does what:

- ``McpOAuth`` (one per app; ``McpProvider.oauth``) hands each HTTP connection an httpx auth
  (``auth_for``) and runs the explicit sign-in (``sign_in``) and sign-out (``sign_out``).
- A connection's auth never asks the person: with no usable token a 401 raises
  ``SignInRequired``, so the server ends in "needs sign-in" and no browser opens unprompted.
  An expired access token is refreshed first (``mcp.oauth.flow``), without the person.
- ``sign_in`` opens the authorization URL through the injected ``open_browser`` (the UI passes
  ``QDesktopServices.openUrl``; tests follow the redirects themselves) and receives the code on
  a loopback listener (``mcp.oauth.callback``). It gives up after ``sign_in_timeout_s`` with a
  message; it is a coroutine of its own, so it never blocks other servers or the GUI.
- Tokens, the client registration and the discovered metadata are kept per server in the OS
  keyring (``mcp.oauth.store``), or in memory for this session when there is no keyring.

Servers configured with their own ``Authorization`` header get no OAuth: a 401 there means the
configured credentials were refused (``CredentialsRejected``).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from app.core.secrets import get_secret, set_secret
from app.core.tools.providers.mcp.config.expand import expand_server_config
from app.core.tools.providers.mcp.config.model import McpConfigError, McpServerConfig
from app.core.tools.providers.mcp.oauth.errors import (
    CredentialsRejected,
    SignInError,
    SignInRequired,
    find_auth_failure,
    uses_oauth,
)
from app.core.tools.providers.mcp.oauth.store import OAuthRecordStore, SecretGetter, SecretSetter

log = logging.getLogger(__name__)

BrowserOpener = Callable[[str], "bool | Awaitable[Any] | None"]
SIGN_IN_TIMEOUT_S = 300.0


class McpOAuth:
    """Sign-in state of every HTTP server. Use it from the event loop's thread."""

    def __init__(self, open_browser: BrowserOpener | None = None, *,
                 get_secret_fn: SecretGetter = get_secret,
                 set_secret_fn: SecretSetter = set_secret,
                 sign_in_timeout_s: float = SIGN_IN_TIMEOUT_S) -> None:
        self.open_browser = open_browser
        self.sign_in_timeout_s = sign_in_timeout_s
        self.store = OAuthRecordStore(get_secret_fn, set_secret_fn)
        self._needs_sign_in: set[str] = set()
        self._signing_in: dict[str, asyncio.Task[str]] = {}
        self._listeners: list[Callable[[str], None]] = []

    # -- state ------------------------------------------------------------------------------

    def needs_sign_in(self, server: str) -> bool:
        return server in self._needs_sign_in

    def signing_in(self, server: str) -> bool:
        task = self._signing_in.get(server)
        return task is not None and not task.done()

    def signed_in(self, server: str) -> bool:
        """Whether tokens are known for the server (from this session's reads and writes;
        no keyring I/O here)."""
        return self.store.known_tokens(server)

    def subscribe(self, listener: Callable[[str], None]) -> None:
        self._listeners.append(listener)

    def mark(self, server: str, needs_sign_in: bool) -> None:
        before = server in self._needs_sign_in
        if needs_sign_in:
            self._needs_sign_in.add(server)
        else:
            self._needs_sign_in.discard(server)
        if before != needs_sign_in:
            self._emit(server)

    def _emit(self, server: str) -> None:
        for listener in list(self._listeners):
            try:
                listener(server)
            except Exception:
                log.exception("OAuth status listener failed")

    # -- the connection's side --------------------------------------------------------------

    def auth_for(self, config: McpServerConfig) -> Any:
        """The httpx auth for one run of the server's connection (None for stdio)."""
        from app.core.tools.providers.mcp.oauth import flow as mcp_oauth_flow

        if config.transport == "stdio":
            return None
        if not uses_oauth(config):
            return mcp_oauth_flow.StaticCredentialsAuth(config.name)
        return mcp_oauth_flow.build_auth(self.store, self.mark, config, interactive=None)

    # -- sign in / out ----------------------------------------------------------------------

    async def sign_in(self, config: McpServerConfig) -> str:
        """Run the browser sign-in for one server; returns a message for the person.

        Raises SignInError when it does not complete (refused, timed out, no browser). A
        second call for the same server replaces a sign-in still waiting for the browser."""
        if not uses_oauth(config):
            raise SignInError(f"MCP server {config.name!r} does not sign in with OAuth "
                              "(it is not an HTTP server, or it sends its own Authorization "
                              "header).")
        earlier = self._signing_in.get(config.name)
        if earlier is not None and not earlier.done():
            earlier.cancel()
        task = asyncio.create_task(self._sign_in(config), name=f"tebiki-signin-{config.name}")
        self._signing_in[config.name] = task
        self._emit(config.name)
        try:
            return await task
        finally:
            if self._signing_in.get(config.name) is task:
                del self._signing_in[config.name]
            self._emit(config.name)

    async def _sign_in(self, config: McpServerConfig) -> str:
        from app.core.tools.providers.mcp.oauth import flow as mcp_oauth_flow
        from app.core.tools.providers.mcp.oauth.callback import LoopbackCallback

        if self.open_browser is None:
            raise SignInError("Signing in needs a web browser, and none is available here.")
        try:
            config = expand_server_config(config)
        except McpConfigError as exc:
            raise SignInError("Cannot sign in: " + "; ".join(exc.errors)) from None
        preferred = await asyncio.to_thread(self.store.redirect_port, config)
        callback = await LoopbackCallback.open(preferred)
        try:
            await asyncio.to_thread(self.store.forget_client_unless_redirect, config,
                                    callback.redirect_uri)
            auth = mcp_oauth_flow.build_auth(self.store, self.mark, config, interactive=(
                self._open_browser, callback.wait), redirect_uri=callback.redirect_uri)
            try:
                async with asyncio.timeout(self.sign_in_timeout_s):
                    await mcp_oauth_flow.probe(config, auth)
            except TimeoutError:
                raise SignInError(
                    f"Sign-in to MCP server {config.name!r} was not completed within "
                    f"{_duration(self.sign_in_timeout_s)}. Click Sign in to try again.") from None
        finally:
            await callback.close()
        self.mark(config.name, False)
        note = ""
        if self.store.in_memory:
            note = (" The OS keyring is not available, so the sign-in is kept for this session "
                    "only.")
        return f"Signed in to MCP server {config.name!r}.{note}"

    async def _open_browser(self, url: str) -> None:
        assert self.open_browser is not None
        try:
            result = self.open_browser(url)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            raise SignInError(f"Could not open a web browser ({exc}). Open this address "
                              f"yourself to sign in: {url}") from None
        if result is False:
            raise SignInError(f"Could not open a web browser. Open this address yourself to "
                              f"sign in: {url}")

    async def sign_out(self, server: str) -> None:
        """Forget the server's tokens and client registration (keyring I/O off the loop)."""
        task = self._signing_in.get(server)
        if task is not None and not task.done():
            task.cancel()
        await asyncio.to_thread(self.store.clear, server)
        self._emit(server)

    async def aclose(self) -> None:
        for task in list(self._signing_in.values()):
            task.cancel()


def auth_refusal(exc: BaseException, server: str,
                 oauth: McpOAuth | None) -> SignInRequired | CredentialsRejected | None:
    """The 401 behind a failure of ``server``, if any: raised by its auth, or one that marked
    the server as needing a sign-in (the SDK may have wrapped or swallowed the exception)."""
    refused = find_auth_failure(exc)
    if refused is None and oauth is not None and oauth.needs_sign_in(server):
        refused = SignInRequired(server)
    return refused


def _duration(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f"{minutes} minute" + ("" if minutes == 1 else "s")
    return f"{seconds:g} s"
