"""The MCP Tasks extension (``io.modelcontextprotocol/tasks``, revision 2026-07-28) for the
test server, on the SDK's own extension API.

A call to one of ``task_tools`` from a client that declared the extension on its request is
answered at once with a task (``resultType: "task"``, status ``working``); the tool runs in the
background. ``tasks/get`` answers the task's state, with the tool's result inlined once it
completed (or the JSON-RPC error when it failed); ``tasks/cancel`` cancels it. A tool in
``ask_first`` asks the person before it runs: its task is ``input_required`` with the form,
until ``tasks/update`` brings the answer, which the tool reads with ``answer()``. A client that
did not declare the extension gets the plain result. Over stdio each change of a task's status
is also pushed as ``notifications/tasks/status`` (over HTTP there is no channel for it outside
a request). A call's ``poll_ms`` argument sets the polling interval its task suggests.
``states`` (what happened to every task) lets a test check the server's side.
"""

from __future__ import annotations

import asyncio
import contextvars
import uuid
from datetime import UTC, datetime
from typing import Any

from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp_types import RequestParams
from pydantic import BaseModel

TASKS = "io.modelcontextprotocol/tasks"
MODERN = frozenset({"2026-07-28"})
# The answer the running task got (the tool runs in the task's own asyncio task).
_ANSWER: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("answer",
                                                                                default=None)


class TaskParams(RequestParams):
    task_id: str
    request_state: str | None = None


class TaskUpdateParams(TaskParams):
    input_responses: dict[str, Any] | None = None


class GaveUp(MCPError):
    """Raised by a tool whose work the server itself abandons: the task ends ``cancelled``."""


class Garbled(MCPError):
    """Raised by a tool to make its task malformed: ``completed`` without a result."""


def _now() -> str:
    return datetime.now(UTC).isoformat()


class _StatusNotification(BaseModel):
    method: str = "notifications/tasks/status"
    params: dict[str, Any]


async def _notify(session: Any, task: dict[str, Any]) -> None:
    """Push the task's state on the connection (dropped where there is no channel: HTTP)."""
    try:
        await session.send_notification(_StatusNotification(params=dict(task)))
    except Exception:  # best effort: polling still tells the client
        pass


class TaskExtension(Extension):
    identifier = TASKS

    def __init__(self, task_tools: frozenset[str], poll_interval_ms: int = 20,
                 ask_first: dict[str, dict[str, Any]] | None = None) -> None:
        self._ask_first = ask_first or {}
        self._task_tools = task_tools | frozenset(self._ask_first)
        self._answers: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._poll_interval_ms = poll_interval_ms
        self.tasks: dict[str, dict[str, Any]] = {}
        self._running: dict[str, asyncio.Task[None]] = {}
        self.polls: dict[str, int] = {}  # tasks/get requests per task

    @staticmethod
    def answer() -> dict[str, Any]:
        return _ANSWER.get() or {}

    def states(self) -> dict[str, str]:
        return {task_id: task["status"] for task_id, task in self.tasks.items()}

    def methods(self) -> list[MethodBinding]:
        return [MethodBinding("tasks/get", TaskParams, self._get, MODERN),
                MethodBinding("tasks/update", TaskUpdateParams, self._ack, MODERN),
                MethodBinding("tasks/cancel", TaskParams, self._cancel, MODERN)]

    async def intercept_tool_call(self, params: Any, ctx: Any, call_next: Any) -> Any:
        capabilities = ctx.session.client_capabilities
        declared = (capabilities.extensions or {}) if capabilities is not None else {}
        if params.name not in self._task_tools or TASKS not in declared:
            return await call_next(ctx)
        task_id = uuid.uuid4().hex[:12]
        now = _now()
        task = self.tasks[task_id] = {
            "taskId": task_id, "status": "working", "statusMessage": "started",
            "createdAt": now, "lastUpdatedAt": now, "ttlSeconds": 600,
            "pollIntervalMilliseconds": int((params.arguments or {}).get("poll_ms")
                                            or self._poll_interval_ms)}
        self._running[task_id] = asyncio.ensure_future(
            self._run(task, ctx, call_next, self._ask_first.get(params.name)))
        return {"resultType": "task", **task}

    async def _ask(self, task: dict[str, Any], form: dict[str, Any], session: Any) -> None:
        answer = self._answers[task["taskId"]] = asyncio.get_running_loop().create_future()
        task.update(status="input_required", statusMessage="waiting for the person",
                    inputRequests={"signer": {"method": "elicitation/create", "params": form}})
        await _notify(session, task)
        _ANSWER.set(await asyncio.wait_for(answer, 30))
        task.pop("inputRequests")
        task.update(status="working", statusMessage="answered")

    async def _run(self, task: dict[str, Any], ctx: Any, call_next: Any,
                   form: dict[str, Any] | None) -> None:
        try:
            if form is not None:
                await self._ask(task, form, ctx.session)
            result = await call_next(ctx)
        except asyncio.CancelledError:
            self._end(task, "cancelled", statusMessage="cancelled by the client")
        except Garbled:
            self._end(task, "completed", statusMessage="done")
        except GaveUp as exc:
            self._end(task, "cancelled", statusMessage=exc.error.message)
        except MCPError as exc:
            self._end(task, "failed", statusMessage=exc.error.message,
                      error={"code": exc.error.code, "message": exc.error.message})
        else:
            payload = result.model_dump(by_alias=True, mode="json", exclude_none=True) \
                if hasattr(result, "model_dump") else dict(result)
            self._end(task, "completed", statusMessage="done", result=payload)
        finally:
            self._running.pop(task["taskId"], None)
        await _notify(ctx.session, task)

    def _end(self, task: dict[str, Any], status: str, **fields: Any) -> None:
        if task["status"] in ("completed", "failed", "cancelled"):
            return  # terminal states never change
        task.update(status=status, lastUpdatedAt=_now(), **fields)

    def _task(self, task_id: str) -> dict[str, Any]:
        task = self.tasks.get(task_id)
        if task is None:
            raise MCPError(code=-32602, message=f"unknown task {task_id!r}")
        return task

    async def _get(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        self.polls[params.task_id] = self.polls.get(params.task_id, 0) + 1
        return {"resultType": "complete", **self._task(params.task_id)}

    async def _ack(self, ctx: Any, params: TaskUpdateParams) -> dict[str, Any]:
        answer = self._answers.get(params.task_id)
        reply = (params.input_responses or {}).get("signer")
        if answer is not None and not answer.done() and isinstance(reply, dict):
            answer.set_result(reply.get("content") or {})
        return {"resultType": "complete"}

    async def _cancel(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        task = self.tasks.get(params.task_id)
        running = self._running.get(params.task_id)
        if task is not None:
            self._end(task, "cancelled", statusMessage="cancelled by the client")
        if running is not None:
            running.cancel()
        return {"resultType": "complete"}
