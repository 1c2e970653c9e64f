"""The MCP SDK's OAuth client, adapted to Tebiki's rules (see ``mcp.oauth.sign_in`` for the
overview).

Imported lazily, once the SDK is loaded (``mcp.transport.load_sdk``): it subclasses the SDK.

What the adaptation adds to ``OAuthClientProvider``:

- *Never ask unprompted.* A connection's auth is non-interactive: when a 401 cannot be cured
  by a refresh it raises ``SignInRequired`` instead of starting discovery and the browser.
- *Refresh on 401.* A stored access token's expiry is unknown to the SDK after a restart, and
  servers revoke tokens early; on a 401 to a token believed live the refresh token is tried
  once before anyone is asked.
- *Remember where to refresh.* The authorization server's metadata is stored with the tokens
  and restored on load, so a refresh after a restart reaches the right token endpoint.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar

import anyio
import httpx2
import mcp_types
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.exceptions import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from pydantic import AnyUrl, BaseModel, ValidationError

from app.core.tools.providers.mcp.config.model import McpServerConfig
from app.core.tools.providers.mcp.oauth.callback import CallbackRefused
from app.core.tools.providers.mcp.oauth.errors import (
    CredentialsRejected,
    SignInError,
    SignInRequired,
)
from app.core.tools.providers.mcp.oauth.store import OAuthRecordStore

log = logging.getLogger(__name__)

CLIENT_NAME = "Tebiki"
# Never used for a redirect: a connection's auth does not authorize; the SDK requires one.
UNUSED_REDIRECT = "http://127.0.0.1/callback"
_M = TypeVar("_M", bound=BaseModel)
CodeWaiter = Callable[[], Awaitable[AuthorizationCodeResult]]
# (open the browser at a URL, wait for the code the loopback callback receives)
Interactive = tuple[Callable[[str], Awaitable[None]], CodeWaiter]
# Records whether a server needs a sign-in (``McpOAuth.mark``): (server, needs_sign_in).
SignInMark = Callable[[str, bool], None]


def _parse(model: type[_M], raw: Any) -> _M | None:
    if raw is None:
        return None
    try:
        return model.model_validate(raw)
    except ValidationError:
        return None


def _dump(value: BaseModel | None) -> Any:
    return None if value is None else value.model_dump(mode="json", exclude_none=True)


class ServerTokenStorage:
    """The SDK's ``TokenStorage`` for one server, over ``OAuthRecordStore`` (off the loop)."""

    def __init__(self, store: OAuthRecordStore, mark: SignInMark,
                 config: McpServerConfig) -> None:
        self._store = store
        self._mark = mark
        self._server = config.name
        self._url = config.url or ""
        self.context: Any = None  # the provider's OAuthContext, set once it exists
        self.expires_at: float | None = None
        self.oauth_metadata: OAuthMetadata | None = None
        self.resource_metadata: ProtectedResourceMetadata | None = None

    async def get_tokens(self) -> OAuthToken | None:
        record = await anyio.to_thread.run_sync(self._store.load, self._server, "tokens",
                                                self._url)
        tokens = _parse(OAuthToken, (record or {}).get("tokens"))
        if record is None or tokens is None:
            return None
        expires_at = record.get("expires_at")
        self.expires_at = float(expires_at) if isinstance(expires_at, int | float) else None
        self.oauth_metadata = _parse(OAuthMetadata, record.get("oauth_metadata"))
        self.resource_metadata = _parse(ProtectedResourceMetadata,
                                        record.get("resource_metadata"))
        return tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        context = self.context
        record = {
            "tokens": _dump(tokens),
            "expires_at": time.time() + tokens.expires_in if tokens.expires_in else None,
            "oauth_metadata": _dump(getattr(context, "oauth_metadata", None)),
            "resource_metadata": _dump(getattr(context, "protected_resource_metadata", None)),
        }
        await anyio.to_thread.run_sync(self._store.save, self._server, "tokens",
                                       self._url, record)
        self._mark(self._server, False)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        record = await anyio.to_thread.run_sync(self._store.load, self._server, "client",
                                                self._url)
        return _parse(OAuthClientInformationFull, (record or {}).get("client"))

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await anyio.to_thread.run_sync(self._store.save, self._server, "client",
                                       self._url, {"client": _dump(client_info)})


class TebikiOAuthProvider(OAuthClientProvider):
    def __init__(self, store: OAuthRecordStore, mark: SignInMark, config: McpServerConfig,
                 interactive: Interactive | None) -> None:
        self._mark = mark
        self._server = config.name
        self._storage = ServerTokenStorage(store, mark, config)
        self._interactive = interactive is not None
        if interactive is not None:
            open_browser, wait_for_code = interactive
            redirect_handler, callback_handler = open_browser, _refusal_as_error(wait_for_code)
        else:
            redirect_handler, callback_handler = self._refuse_to_ask, None
        super().__init__(
            server_url=config.url or "",
            client_metadata=OAuthClientMetadata(
                client_name=CLIENT_NAME, redirect_uris=[AnyUrl(UNUSED_REDIRECT)],
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"], token_endpoint_auth_method="none"),
            storage=self._storage, redirect_handler=redirect_handler,
            callback_handler=callback_handler)
        self._storage.context = self.context

    def use_redirect_uri(self, redirect_uri: str) -> None:
        self.context.client_metadata.redirect_uris = [AnyUrl(redirect_uri)]

    async def _refuse_to_ask(self, url: str) -> None:
        self._mark(self._server, True)
        raise SignInRequired(self._server)

    async def _initialize(self) -> None:
        await super()._initialize()
        context, stored = self.context, self._storage
        if context.current_tokens is None:
            return
        context.token_expiry_time = stored.expires_at
        if context.oauth_metadata is None:
            context.oauth_metadata = stored.oauth_metadata
        if context.protected_resource_metadata is None and stored.resource_metadata:
            context.protected_resource_metadata = stored.resource_metadata
            context.auth_server_url = str(stored.resource_metadata.authorization_servers[0])

    async def _auth_flow(self, request: httpx2.Request
                         ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super()._auth_flow(request)
        retried = False
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                if outgoing is request and response.status_code == 401:
                    if not retried and self.context.is_token_valid() \
                            and self.context.can_refresh_token():
                        # A token we believed live was refused: refresh before asking anyone.
                        retried = True
                        await flow.aclose()
                        self.context.token_expiry_time = 1.0  # long past: the SDK refreshes
                        flow = super()._auth_flow(request)
                        outgoing = await flow.__anext__()
                        continue
                    if not self._interactive:
                        self._mark(self._server, True)
                        raise SignInRequired(self._server)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()


def _refusal_as_error(wait: CodeWaiter) -> CodeWaiter:
    async def callback() -> AuthorizationCodeResult:
        try:
            return await wait()
        except CallbackRefused as exc:
            raise SignInError(f"The sign-in was refused: {exc}") from None

    return callback


def build_auth(store: OAuthRecordStore, mark: SignInMark, config: McpServerConfig, *,
               interactive: Interactive | None,
               redirect_uri: str | None = None) -> TebikiOAuthProvider:
    """The SDK's OAuth provider for one server: tokens in ``store``, a needed (or completed)
    sign-in reported to ``mark``; ``interactive`` only for the explicit sign-in."""
    auth = TebikiOAuthProvider(store, mark, config, interactive)
    if redirect_uri is not None:
        auth.use_redirect_uri(redirect_uri)
    return auth


class StaticCredentialsAuth(httpx2.Auth):
    """For servers sending their own Authorization header: a 401 becomes a clear error."""

    def __init__(self, server: str) -> None:
        self._server = server

    async def async_auth_flow(self, request: httpx2.Request
                              ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        response = yield request
        if response.status_code == 401:
            raise CredentialsRejected(self._server)


async def probe(config: McpServerConfig, auth: TebikiOAuthProvider) -> None:
    """One ``initialize`` POST through ``auth``: a 401 runs the sign-in; the tokens are stored
    by then. Raises SignInError when the sign-in fails or the server still refuses."""
    name, url = config.name, config.url or ""
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": mcp_types.LATEST_PROTOCOL_VERSION, "capabilities": {},
        "clientInfo": {"name": "tebiki", "version": "sign-in"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    session_id = None
    async with httpx2.AsyncClient(headers=dict(config.headers), auth=auth,
                                  timeout=httpx2.Timeout(30.0)) as client:
        try:
            async with client.stream("POST", url, json=body, headers=headers) as response:
                status = response.status_code
                session_id = response.headers.get("mcp-session-id")
        except (SignInError, SignInRequired):
            raise
        except (OAuthFlowError, OAuthRegistrationError, OAuthTokenError) as exc:
            raise SignInError(f"Sign-in to MCP server {name!r} failed: {exc}") from None
        except (httpx2.HTTPError, ValidationError, ValueError) as exc:
            raise SignInError(f"Sign-in to MCP server {name!r} failed: {type(exc).__name__}: "
                              f"{exc}") from None
        if status in (401, 403):
            raise SignInError(f"MCP server {name!r} still refuses access after signing in "
                              f"(HTTP {status}).")
        if auth.context.current_tokens is None:
            raise SignInError(f"MCP server {name!r} answered without asking for a sign-in "
                              f"(HTTP {status}), so there is nothing to sign in to.")
        if session_id:
            try:  # the probe's session is not used: end it politely
                await client.delete(url, headers={"mcp-session-id": session_id})
            except httpx2.HTTPError:
                pass
