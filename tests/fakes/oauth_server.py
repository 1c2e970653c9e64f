"""A loopback OAuth authorization server in front of a protected streamable-HTTP MCP server.

One uvicorn server on 127.0.0.1 (random port, own thread) serves:

- ``/.well-known/oauth-protected-resource[/mcp]`` (RFC 9728) naming this server as the
  authorization server, and ``/.well-known/oauth-authorization-server`` (RFC 8414);
Endpoints sit under ``/oauth/`` (not where a client guesses them without metadata), so a
client that forgot the discovered metadata fails visibly.

- ``/oauth/register``: dynamic client registration (RFC 7591), public clients only;
- ``/oauth/authorize``: no login page — it redirects straight to the ``redirect_uri`` with a code,
  the way a browser would end up after the person approved (``deny`` makes it send
  ``error=access_denied`` instead);
- ``/oauth/token``: ``authorization_code`` with PKCE (S256) verification and ``refresh_token``;
- ``/mcp``: an MCP server (tools ``echo`` and ``whoami``) that answers 401 with a
  ``WWW-Authenticate`` challenge unless the request carries a live access token.

Tests can expire every access token (``expire_access_tokens``) and read counters of what was
granted, so "refreshed without the person" is checked on the server's side.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import socket
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route


@dataclass
class _Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    resource: str | None


@dataclass
class OAuthFakeStats:
    registrations: int = 0
    authorizations: int = 0
    code_grants: int = 0
    refresh_grants: int = 0
    rejected_mcp_requests: int = 0
    token_errors: list[str] = field(default_factory=list)


def pkce_challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


class FakeOAuthServer:
    """Start with ``start()`` (returns once it accepts connections), end with ``stop()``."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.mcp_url = f"{self.base}/mcp"
        self.stats = OAuthFakeStats()
        self.deny = False  # /authorize answers error=access_denied
        self.clients: dict[str, dict[str, Any]] = {}
        self.codes: dict[str, _Grant] = {}
        self.access_tokens: set[str] = set()
        self.refresh_tokens: dict[str, str] = {}  # refresh token → client id
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    # -- test controls ----------------------------------------------------------------------

    def expire_access_tokens(self) -> None:
        with self._lock:
            self.access_tokens.clear()

    def revoke_refresh_tokens(self) -> None:
        with self._lock:
            self.refresh_tokens.clear()

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        """Listening before uvicorn runs: early connections wait in the backlog, so callers
        need no "is it up yet" polling."""
        self._sock.listen(64)
        server = self._server = uvicorn.Server(
            uvicorn.Config(self._app(), log_level="warning", lifespan="on"))

        def run() -> None:
            asyncio.run(server.serve(sockets=[self._sock]))

        self._thread = threading.Thread(target=run, name="fake-oauth", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self._sock.close()

    # -- the app ----------------------------------------------------------------------------

    def _app(self) -> Any:
        mcp = MCPServer("oauth-protected-demo")

        @mcp.tool(description="Echo the text back.")
        def echo(text: str) -> str:
            return text

        @mcp.tool(description="Say that the caller is signed in.")
        def whoami() -> str:
            return "signed-in user"

        inner = mcp.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
        for path, endpoint, methods in (
                ("/.well-known/oauth-protected-resource", self._resource_metadata, ["GET"]),
                ("/.well-known/oauth-protected-resource/mcp", self._resource_metadata, ["GET"]),
                ("/.well-known/oauth-authorization-server", self._server_metadata, ["GET"]),
                ("/oauth/register", self._register, ["POST"]),
                ("/oauth/authorize", self._authorize, ["GET"]),
                ("/oauth/token", self._token, ["POST"])):
            inner.router.routes.append(Route(path, endpoint, methods=methods))
        return self._protect(inner)

    def _protect(self, inner: Any) -> Any:
        """ASGI wrapper: ``/mcp`` needs a live bearer token; everything else passes."""
        challenge = (f'Bearer error="invalid_token", resource_metadata='
                     f'"{self.base}/.well-known/oauth-protected-resource/mcp"')

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http" and scope["path"].startswith("/mcp"):
                headers = dict(scope.get("headers") or [])
                auth = headers.get(b"authorization", b"").decode("latin-1")
                token = auth[7:] if auth.lower().startswith("bearer ") else ""
                with self._lock:
                    valid = token in self.access_tokens
                if not valid:
                    self.stats.rejected_mcp_requests += 1
                    response = JSONResponse({"error": "invalid_token"}, status_code=401,
                                            headers={"WWW-Authenticate": challenge})
                    await response(scope, receive, send)
                    return
            await inner(scope, receive, send)

        return app

    async def _resource_metadata(self, request: Request) -> Response:
        return JSONResponse({"resource": self.mcp_url, "authorization_servers": [self.base],
                             "bearer_methods_supported": ["header"]})

    async def _server_metadata(self, request: Request) -> Response:
        return JSONResponse({
            "issuer": self.base,
            "authorization_endpoint": f"{self.base}/oauth/authorize",
            "token_endpoint": f"{self.base}/oauth/token",
            "registration_endpoint": f"{self.base}/oauth/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
        })

    async def _register(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body())
            redirect_uris = [str(u) for u in body["redirect_uris"]]
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "invalid_client_metadata"}, status_code=400)
        client_id = "client-" + secrets.token_hex(8)
        record = {"client_id": client_id, "redirect_uris": redirect_uris,
                  "token_endpoint_auth_method": "none",
                  "grant_types": ["authorization_code", "refresh_token"],
                  "response_types": ["code"], "client_id_issued_at": 1_700_000_000}
        with self._lock:
            self.clients[client_id] = record
        self.stats.registrations += 1
        return JSONResponse(record, status_code=201)

    async def _authorize(self, request: Request) -> Response:
        q = request.query_params
        client = self.clients.get(q.get("client_id", ""))
        redirect_uri = q.get("redirect_uri", "")
        if client is None or redirect_uri not in client["redirect_uris"]:
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        state = q.get("state", "")
        if self.deny:
            return RedirectResponse(f"{redirect_uri}?" + urlencode(
                {"error": "access_denied", "error_description": "the person said no",
                 "state": state}), status_code=302)
        if q.get("response_type") != "code" or q.get("code_challenge_method") != "S256" \
                or not q.get("code_challenge"):
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        code = secrets.token_urlsafe(16)
        with self._lock:
            self.codes[code] = _Grant(client["client_id"], redirect_uri,
                                      q["code_challenge"], q.get("resource"))
        self.stats.authorizations += 1
        return RedirectResponse(f"{redirect_uri}?" + urlencode({"code": code, "state": state}),
                                status_code=302)

    def _issue(self, client_id: str) -> dict[str, Any]:
        access, refresh = "at-" + secrets.token_urlsafe(16), "rt-" + secrets.token_urlsafe(16)
        with self._lock:
            self.access_tokens.add(access)
            self.refresh_tokens[refresh] = client_id
        return {"access_token": access, "token_type": "Bearer", "expires_in": 3600,
                "refresh_token": refresh}

    def _token_error(self, why: str) -> Response:
        self.stats.token_errors.append(why)
        return JSONResponse({"error": "invalid_grant", "error_description": why},
                            status_code=400)

    async def _token(self, request: Request) -> Response:
        form = await request.form()
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            with self._lock:
                grant = self.codes.pop(str(form.get("code", "")), None)
            if grant is None:
                return self._token_error("unknown or used code")
            if form.get("client_id") != grant.client_id or \
                    form.get("redirect_uri") != grant.redirect_uri:
                return self._token_error("client or redirect_uri mismatch")
            if pkce_challenge(str(form.get("code_verifier", ""))) != grant.challenge:
                return self._token_error("PKCE verification failed")
            self.stats.code_grants += 1
            return JSONResponse(self._issue(grant.client_id))
        if grant_type == "refresh_token":
            with self._lock:
                client_id = self.refresh_tokens.pop(str(form.get("refresh_token", "")), None)
            if client_id is None or form.get("client_id") != client_id:
                return self._token_error("unknown refresh token")
            self.stats.refresh_grants += 1
            return JSONResponse(self._issue(client_id))
        return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
