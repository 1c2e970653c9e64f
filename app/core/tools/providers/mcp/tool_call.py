"""One ``tools/call`` on a server's live session, and every way it can end, as a ToolResult.

Separate from ``mcp.connection`` because the call path runs in the caller's task (the agent
loop), not in the server's own task that owns the session's lifecycle: it only uses the
connection's public state, plus ``mark_needs_auth`` when a call meets a 401 (``CalledServer``
says which). Stop (the caller's cancellation) abandons the wait at once; the SDK then sends
``notifications/cancelled``. A call refused with -32042 (the person must open a web page
first) shows them the pages (``mcp.elicitation_required``). A call the server answers with a
task (2026-07-28) is followed until the task ends (``mcp.task_follow``), bounded by the task's
own limit rather than the call's timeout; its result is converted like any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import anyio

from app.core.tools.base import ProgressFn, ToolResult
from app.core.tools.providers.mcp import connection_texts as texts
from app.core.tools.providers.mcp.elicitation_required import ask_for_pages, required_pages
from app.core.tools.providers.mcp.oauth.errors import (
    CredentialsRejected,
    SignInRequired,
    auth_failure_for_model,
)
from app.core.tools.providers.mcp.results import (
    OutputSchemaMismatch,
    call_result_to_tool_result,
    progress_callback,
    schema_mismatch_result,
)
from app.core.tools.providers.mcp.revision import with_input
from app.core.tools.providers.mcp.server_requests import HandlerSource
from app.core.tools.providers.mcp.server_status import ServerState


class CalledServer(Protocol):
    """What a call needs of the server's connection (``McpConnection``)."""

    @property
    def name(self) -> str: ...

    @property
    def state(self) -> ServerState: ...

    @property
    def message(self) -> str: ...

    @property
    def session(self) -> Any:
        """The live client session, or None when the server is not running."""
        ...

    @property
    def stopping(self) -> bool: ...

    @property
    def server_requests(self) -> HandlerSource:
        """Who asks the person for the server (sampling, elicitation)."""
        ...

    @property
    def ended(self) -> bool: ...

    def unavailable_message(self, tool_name: str) -> str: ...

    def refusal(self, exc: BaseException) -> SignInRequired | CredentialsRejected | None: ...

    def mark_needs_auth(self, refused: SignInRequired | CredentialsRejected) -> None: ...

    async def collect_stderr(self) -> None: ...

    def stderr_tail(self) -> str: ...


async def call_tool(conn: CalledServer, remote_name: str, arguments: Mapping[str, Any], *,
                    timeout_s: float, max_output_chars: int, label: str | None,
                    progress: ProgressFn | None) -> ToolResult:
    """Run one tool on ``conn``'s server. Errors of every kind become ``ToolResult.error``."""
    tool_name = label or remote_name
    session = conn.session
    if session is None:
        return ToolResult.error(conn.unavailable_message(tool_name))
    on_progress = None if progress is None else progress_callback(progress)
    try:
        with anyio.fail_after(timeout_s):
            async def send(responses: Any = None, state: str | None = None) -> Any:
                return await session.call_tool(
                    remote_name, dict(arguments), progress_callback=on_progress,
                    input_responses=responses, request_state=state, allow_input_required=True,
                    allow_claimed=True)

            result = await with_input(session, await send(), send)
        result = await _finish(session, result, progress)  # a task has its own bound
    except TimeoutError:
        return ToolResult.error(texts.call_timeout_text(tool_name, conn.name, timeout_s))
    except OutputSchemaMismatch as exc:
        return schema_mismatch_result(exc, tool_name, conn.name, max_output_chars)
    except Exception as exc:
        if (refused := conn.refusal(exc)) is not None:
            conn.mark_needs_auth(refused)
            return ToolResult.error(auth_failure_for_model(refused, tool_name))
        if (ended := _task_text(exc)) is not None:
            return ToolResult.error(f"{tool_name} on MCP server {conn.name!r}: {ended}")
        if (pages := required_pages(exc)) is not None:
            return await ask_for_pages(conn.name, tool_name, pages, conn.server_requests)
        if conn.stopping:
            return ToolResult.error(texts.stopped_during_call_text(tool_name, conn.name))
        if conn.ended or conn.state == "failed":
            await conn.collect_stderr()
            return ToolResult.error(texts.died_text(tool_name, conn.name, conn.message,
                                                    conn.stderr_tail()))
        return ToolResult.error(texts.call_failed_text(tool_name, conn.name, exc))
    return call_result_to_tool_result(result, tool_name, max_output_chars)


async def _finish(session: Any, result: Any, progress: ProgressFn | None) -> Any:
    """The call's result: as it came, or a task's eventual one. (Imported here: the SDK is
    loaded once a session exists.)"""
    from app.core.tools.providers.mcp.task_follow import follow_task, is_task

    return await follow_task(session, result, progress) if is_task(result) else result


def _task_text(exc: BaseException) -> str | None:
    """How a task that ended without a result reads for the model, else None."""
    from app.core.tools.providers.mcp.task_follow import MalformedTask, TaskEnded

    if isinstance(exc, TaskEnded):
        return f"{exc}. The tool did not finish; retry only if that makes sense."
    if isinstance(exc, MalformedTask):
        return f"the server's task answer was malformed ({exc}), so there is no result."
    return None
