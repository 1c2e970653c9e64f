"""MCP Tasks (the ``io.modelcontextprotocol/tasks`` extension of revision 2026-07-28): a
long-running ``tools/call`` answered with a task handle instead of its result.

On a 2026-07-28 session Tebiki declares the extension in its per-request capabilities (the SDK
drops it on older revisions, where the task shape cannot arrive, so nothing unsupported is
advertised); the server alone decides per call whether to answer with a task (``resultType:
"task"``). ``follow_task`` then polls ``tasks/get`` (at the server's
``pollIntervalMilliseconds``, else a growing interval, both bounded), taking a state a
``notifications/tasks/status`` brings at once instead (the session's ``TaskWatch`` routes
them), and reports each state as the call's progress, "task <id> · <status message>", which is
what its card shows. The ``completed`` task carries the ``CallToolResult`` that is converted
like any other; a ``failed`` or ``cancelled`` one, or a task past its ``ttlSeconds``, becomes a
``TaskEnded`` the caller turns into an error the model can act on; a malformed answer a
``MalformedTask``. Input the task asks for (``input_required``) is answered through the
session's own handlers (the same dialogs) and sent with ``tasks/update``.

Stop cancels the waiting, and so does the end of ``MAX_TASK_WAIT_S`` (the call's own timeout
bounds only the call until the server answers): ``tasks/cancel`` is sent (shielded, bounded)
before the cancellation goes on, so the server's work does not run on unseen.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, Literal

import anyio
from mcp_types import (
    CallToolResult,
    EmptyResult,
    InputRequest,
    Request,
    RequestParams,
    Result,
)
from pydantic import ConfigDict, ValidationError

from app.core.tools.base import ProgressFn

log = logging.getLogger(__name__)

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
# Polling: the server's interval is honoured within these bounds; without one the interval
# grows from the first to the last.
MIN_POLL_S, FIRST_POLL_S, MAX_POLL_S = 0.02, 0.1, 5.0
# How long one tasks/* request, and the tasks/cancel sent on Stop, may take.
REQUEST_TIMEOUT_S, CANCEL_TIMEOUT_S = 30.0, 5.0
# How long a task is waited for. Not the call's timeout, which bounds the call until the
# server answers: a task is long-running work by the server's own account, shown on its card,
# which the person can cancel at any time.
MAX_TASK_WAIT_S = 3600.0
TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]


class CreatedTask(Result):
    """A ``tools/call`` answered with a task (``CreateTaskResult``)."""

    model_config = ConfigDict(extra="allow")  # requestState: echoed, never declared by a claim
    result_type: Literal["task"]
    task_id: str
    status: TaskStatus
    status_message: str | None = None
    ttl_seconds: int | None = None
    poll_interval_milliseconds: int | None = None


class TaskState(Result):
    """A ``tasks/get`` answer: the task's state and what its status carries."""

    model_config = ConfigDict(extra="ignore")
    task_id: str
    status: TaskStatus
    status_message: str | None = None
    ttl_seconds: int | None = None
    poll_interval_milliseconds: int | None = None
    request_state: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, InputRequest] | None = None


class TaskParams(RequestParams):
    task_id: str
    request_state: str | None = None


class TaskUpdateParams(TaskParams):
    input_responses: dict[str, Any]


class GetTask(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"  # the Mcp-Name header routes it to the server holding the task


class UpdateTask(Request[TaskUpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class CancelTask(Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class TaskEnded(Exception):
    """The task ended without a result: failed, cancelled by the server, or expired."""


class MalformedTask(Exception):
    """The server's task answer is not a task Tebiki can follow."""


async def _unfollowed(created: CreatedTask, ctx: Any) -> CallToolResult:
    raise MalformedTask("a task reached the SDK's resolver; Tebiki follows tasks itself")


class TaskWatch:
    """The tasks followed on one session, by id: where a ``notifications/tasks/status``
    goes. Its ``session_options`` declare the extension and accept its shapes."""

    def __init__(self) -> None:
        self._following: dict[str, TaskFollower] = {}

    def session_options(self) -> dict[str, Any]:
        """``ClientSession`` keyword arguments (the SDK declares the extension only on a
        revision that has it, 2026-07-28, so nothing unsupported is advertised)."""
        from mcp.client.extension import NotificationBinding, ResultClaim

        claim = ResultClaim(result_type="task", model=CreatedTask, resolve=_unfollowed)
        status = NotificationBinding(method="notifications/tasks/status",
                                     params_type=TaskState, handler=self._heard)
        return {"extensions": {TASKS_EXTENSION: {}},
                "result_claims": {TASKS_EXTENSION: [claim]},
                "notification_bindings": [status]}

    def follow(self, follower: TaskFollower) -> None:
        self._following[follower.task_id] = follower

    def forget(self, follower: TaskFollower) -> None:
        if self._following.get(follower.task_id) is follower:
            del self._following[follower.task_id]

    async def _heard(self, state: TaskState) -> None:
        follower = self._following.get(state.task_id)
        if follower is not None:
            follower.heard(state)


def is_task(result: object) -> bool:
    return isinstance(result, CreatedTask)


def task_line(task_id: str, status: str, message: str | None) -> str:
    """What the call's card shows while the task runs."""
    return f"task {task_id} · {message or status.replace('_', ' ')}"


class TaskFollower:
    """Follows one task on ``session`` until it ends; its own state: the latest request
    state to echo, the input requests already answered, the next poll interval."""

    def __init__(self, session: Any, created: CreatedTask, progress: ProgressFn | None) -> None:
        self._session = session
        self.task_id = created.task_id
        # A state a status notification brought, used instead of the next tasks/get.
        self._heard: TaskState | None = None
        self._woken = anyio.Event()
        self._progress = progress
        self._state: str | None = (created.model_extra or {}).get("requestState")
        self._answered: set[str] = set()
        self._shown = ""  # the last line reported, so an unchanged state is not repainted
        self._interval = FIRST_POLL_S
        self._expires = (None if created.ttl_seconds is None
                         else time.monotonic() + max(created.ttl_seconds, 0))
        self._report(created.status, created.status_message)
        self._pace(created.poll_interval_milliseconds)

    async def result(self) -> CallToolResult:
        """The completed task's result; TaskEnded / MalformedTask otherwise. The wait is
        bounded by ``MAX_TASK_WAIT_S``, past which the task is cancelled."""
        with anyio.move_on_after(MAX_TASK_WAIT_S):
            return await self._follow()
        raise TaskEnded(f"task {self.task_id} did not finish within {MAX_TASK_WAIT_S:g} s, "
                        "so Tebiki cancelled it")

    async def _follow(self) -> CallToolResult:
        try:
            while True:
                with anyio.move_on_after(self._interval):
                    await self._woken.wait()
                heard, self._heard, self._woken = self._heard, None, anyio.Event()
                task = heard if heard is not None else await self._get()
                self._report(task.status, task.status_message)
                if task.status == "completed":
                    return _call_result(task)
                if task.status in ("failed", "cancelled"):
                    raise TaskEnded(_ended_text(task))
                if task.status == "input_required":
                    await self._answer(task.input_requests or {})
                if self._expires is not None and time.monotonic() > self._expires:
                    raise TaskEnded(f"task {self.task_id} outlived its time to live on the "
                                    "server without finishing")
                self._pace(task.poll_interval_milliseconds)
        except anyio.get_cancelled_exc_class():
            await self._cancel()
            raise

    def heard(self, state: TaskState) -> None:
        """A status notification: its state is taken at once (and its request state echoed
        from now on), as a tasks/get answer would be."""
        self._state = state.request_state
        self._heard = state
        self._woken.set()

    async def _get(self) -> TaskState:
        try:
            task: TaskState = await self._session.send_request(
                GetTask(params=TaskParams(task_id=self.task_id, request_state=self._state)),
                TaskState, request_read_timeout_seconds=REQUEST_TIMEOUT_S)
        except ValidationError as exc:
            raise MalformedTask(f"the server's tasks/get answer is not a task: "
                                f"{exc.error_count()} problem(s)") from exc
        if task.task_id != self.task_id:
            raise MalformedTask(f"asked for task {self.task_id}, the server answered about "
                                f"task {task.task_id}")
        self._state = task.request_state
        return task

    async def _answer(self, requests: Mapping[str, InputRequest]) -> None:
        """Ask the person (or the model) once per input request, then send the answers."""
        from mcp.client.context import ClientRequestContext

        responses: dict[str, Any] = {}
        for key, request in requests.items():
            if key in self._answered:
                continue
            meta = request.params.meta if request.params is not None else None
            ctx = ClientRequestContext(session=self._session, request_id=key, meta=meta)
            responses[key] = await self._session.dispatch_input_request(ctx, request)
            self._answered.add(key)
        if responses:
            await self._session.send_request(
                UpdateTask(params=TaskUpdateParams(task_id=self.task_id,
                                                   request_state=self._state,
                                                   input_responses=responses)),
                EmptyResult, request_read_timeout_seconds=REQUEST_TIMEOUT_S)

    async def _cancel(self) -> None:
        with anyio.move_on_after(CANCEL_TIMEOUT_S, shield=True):
            try:
                await self._session.send_request(
                    CancelTask(params=TaskParams(task_id=self.task_id,
                                                 request_state=self._state)),
                    EmptyResult, request_read_timeout_seconds=CANCEL_TIMEOUT_S)
            except Exception as exc:  # the call ends as stopped either way
                log.info("tasks/cancel of %s failed: %s", self.task_id, exc)

    def _pace(self, poll_interval_ms: int | None) -> None:
        if poll_interval_ms is not None and poll_interval_ms >= 0:
            self._interval = min(max(poll_interval_ms / 1000, MIN_POLL_S), MAX_POLL_S)
        else:
            self._interval = min(self._interval * 1.5, MAX_POLL_S)

    def _report(self, status: str, message: str | None) -> None:
        line = task_line(self.task_id, status, message)
        if self._progress is None or line == self._shown:
            return
        self._shown = line
        try:
            self._progress(0, None, line)
        except Exception:
            log.exception("progress listener failed")


def _call_result(task: TaskState) -> CallToolResult:
    if task.result is None:
        raise MalformedTask(f"task {task.task_id} completed without a result")
    try:
        return CallToolResult.model_validate(task.result, by_name=False)
    except ValidationError as exc:
        raise MalformedTask(f"task {task.task_id}'s result is not a tool result: "
                            f"{exc.error_count()} problem(s)") from exc


def _ended_text(task: TaskState) -> str:
    error: Mapping[str, Any] = task.error or {}
    why = task.status_message or str(error.get("message") or "") or "no reason given"
    return f"task {task.task_id} {task.status} on the server: {why}"


async def follow_task(session: Any, created: CreatedTask,
                      progress: ProgressFn | None) -> CallToolResult:
    follower = TaskFollower(session, created, progress)
    watch: TaskWatch | None = getattr(session, "task_watch", None)
    if watch is None:
        return await follower.result()
    watch.follow(follower)
    try:
        return await follower.result()
    finally:
        watch.forget(follower)
