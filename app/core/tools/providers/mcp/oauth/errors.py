"""What a 401 from an MCP server means, as exceptions and messages (no OAuth machinery here).

Separate from ``mcp.oauth.sign_in`` so the SDK adapter (``mcp.oauth.flow``), the connection and the
settings UI can name these failures without importing the sign-in manager, and the manager can
import the adapter without a cycle.
"""

from __future__ import annotations

from app.core.tools.providers.mcp.config.model import McpServerConfig


class SignInRequired(Exception):
    """The server answered 401 and there is no token that works: the person must sign in."""

    def __init__(self, server: str) -> None:
        super().__init__(f"MCP server {server!r} requires signing in (HTTP 401)")
        self.server = server


class CredentialsRejected(Exception):
    """A server with a configured Authorization header answered 401."""

    def __init__(self, server: str) -> None:
        super().__init__(f"MCP server {server!r} refused the configured Authorization header "
                         "(HTTP 401)")
        self.server = server


class SignInError(Exception):
    """Sign-in did not complete; the message says why, for the person."""


def find_auth_failure(exc: BaseException | None) -> SignInRequired | CredentialsRejected | None:
    """The 401 behind ``exc`` (searching causes, contexts and exception groups), if any."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc] if exc is not None else []
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, SignInRequired | CredentialsRejected):
            return item
        todo += [e for e in (item.__cause__, item.__context__) if e is not None]
        todo += list(getattr(item, "exceptions", ()) or ())
    return None


def auth_failure_status(failure: SignInRequired | CredentialsRejected) -> str:
    """The server's status message for Settings → MCP servers."""
    if isinstance(failure, SignInRequired):
        return "needs sign-in: the server requires signing in (HTTP 401); click Sign in"
    return ("the server refused the configured Authorization header (HTTP 401); check it in "
            "the server's headers")


def auth_failure_for_model(failure: SignInRequired | CredentialsRejected, tool: str) -> str:
    """The tool error the model reads: the person has to act, retrying will not help."""
    if isinstance(failure, SignInRequired):
        return (f"{tool} is unavailable: MCP server {failure.server!r} requires the user to sign "
                "in (HTTP 401). Retrying will not help: ask the user to click Sign in for this "
                "server in Settings → MCP servers, then try again.")
    return (f"{tool} is unavailable: MCP server {failure.server!r} refused its configured "
            "credentials (HTTP 401). Ask the user to fix the server's Authorization header in "
            "Settings → MCP servers.")


def uses_oauth(config: McpServerConfig) -> bool:
    """HTTP servers sign in with OAuth unless their config sends its own Authorization."""
    return config.transport != "stdio" and not any(
        key.lower() == "authorization" for key in config.headers)
