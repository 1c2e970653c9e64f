"""What an MCP server's state means in words: its status line, why it did not start, and the
error a tool call returns when the server cannot answer.

Separate from ``mcp.connection`` because these texts are read by two audiences (the person in
Settings → MCP servers, the model in a tool result) and are reviewed and changed on their own;
the connection decides *which* text applies, this module says it. Everything here is pure.
"""

from __future__ import annotations

from app.core.sandbox import SandboxRequired
from app.core.tools.providers.mcp.config.model import McpConfigError
from app.core.tools.providers.mcp.http_watch import UNAUTHORIZED
from app.core.tools.providers.mcp.oauth.errors import (
    CredentialsRejected,
    SignInRequired,
    auth_failure_status,
)
from app.core.tools.providers.mcp.results import describe_exception
from app.core.tools.providers.mcp.session_info import hidden_tools_note, http_status_text
from app.core.tools.providers.mcp.transport import StdioLaunch, sandbox_hint

_SETTINGS = "Settings → MCP servers"


def tool_count_text(n: int) -> str:
    return f"{n} tool" + ("" if n == 1 else "s")


def running_message(tool_count: int, hidden_tools: int, launch: StdioLaunch | None,
                    legacy_sse: bool = False) -> str:
    """The status of a running server: its tool count, then any notes."""
    notes = [hidden_tools_note(hidden_tools), launch.note if launch is not None else "",
             "legacy SSE transport" if legacy_sse else ""]
    return "; ".join([tool_count_text(tool_count), *(n for n in notes if n)])


def sandbox_required_text(reason: str) -> str:
    return ("not started: the sandbox is required (\"Require the sandbox\" is on in "
            f"Settings) and it is not available here: {reason}. "
            "Fix that, or switch off \"Require the sandbox\" to start this server "
            "unsandboxed.")


def startup_failure_text(exc: BaseException, *, sandbox_reason: str,
                         launch: StdioLaunch | None,
                         refused: SignInRequired | CredentialsRejected | None,
                         http_status: int, startup_timeout_s: float, ended: bool,
                         has_stderr: bool) -> tuple[str, bool]:
    """Why a start failed (``exc`` is the leaf exception), and whether the server needs
    sign-in. ``refused`` is the 401 behind the failure, if any."""
    if isinstance(exc, SandboxRequired):
        return sandbox_required_text(sandbox_reason), False
    text, needs_auth = _failure_text(exc, refused=refused, http_status=http_status,
                                     startup_timeout_s=startup_timeout_s, ended=ended,
                                     has_stderr=has_stderr)
    hint = sandbox_hint(launch) if launch is not None else ""
    return text + hint, needs_auth


def _failure_text(exc: BaseException, *, refused: SignInRequired | CredentialsRejected | None,
                  http_status: int, startup_timeout_s: float, ended: bool,
                  has_stderr: bool) -> tuple[str, bool]:
    if isinstance(exc, McpConfigError):
        return "cannot start: " + "; ".join(exc.errors), False
    if isinstance(exc, ImportError):
        return ("cannot start: the MCP SDK is not installed (pip install 'mcp>=2.3'): "
                f"{exc}"), False
    if refused is not None:
        return auth_failure_status(refused), True
    if http_status == UNAUTHORIZED:
        return ("needs sign-in: the server answered HTTP 401 Unauthorized. Sign in to it, "
                "or give it a token in its \"headers\" (Authorization)."), True
    if isinstance(exc, TimeoutError):
        return (f"the server did not finish starting within {startup_timeout_s:g}s "
                "(initialize and list tools)"), False
    detail = describe_exception(exc)
    if http_status:
        detail = f"{http_status_text(http_status)}: {detail}"
    if "Connection closed" in detail or ended:
        return "the server exited during startup" + (
            "; see its stderr below" if has_stderr else ""), False
    return f"cannot start: {detail}", False


def unreachable_text(message: str) -> str:
    """A lost HTTP server that a reconnect could not reach."""
    return f"unreachable ({message}); Tebiki tries again at the next call"


def restart_failed_text(message: str) -> str:
    """A stdio server that crashed and could not be started again."""
    return f"restarting it after it stopped failed ({message}); Tebiki tries again at the " \
        "next call"


def restarted_note(server: str) -> str:
    """Put before the result of a call that restarted its crashed server first."""
    return f"[MCP server {server!r} had stopped; Tebiki restarted it for this call.]"


def unavailable_text(tool_name: str, server: str, state: str, message: str,
                     stderr_tail: str) -> str:
    """A call to a server that is not running."""
    said = {"failed": "has failed", "stopped": "is stopped", "starting": "is still starting",
            "disabled": "is disabled"}.get(state, f"is {state}")
    text = f"{tool_name} is unavailable: MCP server {server!r} {said}"
    if message:
        text += f" ({message})"
    text += f". Ask the user to check or restart it in {_SETTINGS}."
    if stderr_tail and state == "failed":
        text += f"\nLast output on its stderr:\n{stderr_tail}"
    return text


def died_text(tool_name: str, server: str, message: str, stderr_tail: str) -> str:
    """The server died while a call was running."""
    text = (f"MCP server {server!r} stopped while running {tool_name}: "
            f"{message or 'the connection ended'}. {tool_name} may or may not have run (its "
            "effects are unknown), so it is not sent again; check before repeating it.")
    if stderr_tail:
        text += f"\nLast output on its stderr:\n{stderr_tail}"
    return text


def call_timeout_text(tool_name: str, server: str, timeout_s: float) -> str:
    return (f"{tool_name} on MCP server {server!r} did not answer within {timeout_s:g}s, "
            "so Tebiki stopped waiting (the server may still be working on it). Try a "
            "smaller request, or ask the user to raise the server's \"timeout\" in "
            f"{_SETTINGS}.")


def stopped_during_call_text(tool_name: str, server: str) -> str:
    return (f"MCP server {server!r} was stopped or restarted while {tool_name} was "
            "running, so there is no result. The call's effects are unknown.")


def call_failed_text(tool_name: str, server: str, exc: BaseException) -> str:
    return f"MCP server {server!r} could not run {tool_name}: {describe_exception(exc)}"
