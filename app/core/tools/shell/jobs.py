"""shell_exec's background jobs: starting one, and the shell_jobs tool that reads or stops them.

Separate from the shell_exec tool (``builtin.shell_exec``), which decides whether and where a
command runs, because a job's life after its start is a concern of its own: the registry of a
conversation's jobs (``ToolContext.session``), their accumulating output, the limit on running
ones, waiting for and stopping them. It lives outside ``builtin`` because built-in tool modules
are independent of each other (pyproject's import contract); ``builtin.shell_exec`` lists the
shell_jobs tool in its ``create()``.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from app.core.tools.base import (
    RiskLevel,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
    parse_input,
)
from app.core.tools.config_fields import ConfigField, FieldKind
from app.core.tools.output_buffer import OutputBuffer
from app.core.tools.params.declaration import Params, param
from app.core.tools.process_runner import RunResult, run_steps

__all__ = [
    "MAX_RUNNING_JOBS",
    "SESSION_JOBS",
    "ShellJob",
    "ShellJobsParams",
    "ShellJobsTool",
    "active_jobs",
    "start_job",
    "stop_jobs",
]

SESSION_JOBS = "shell_jobs"
MAX_RUNNING_JOBS = 8
# shell_jobs' option, read when shell_exec starts a job (every tool's options are in its context).
MAX_RUNNING_JOBS_FIELD = ConfigField(
    "max_running_jobs", "Running jobs", FieldKind.INTEGER, default=MAX_RUNNING_JOBS,
    minimum=1, maximum=64, unit="jobs",
    help="How many background jobs of one conversation may run at once; shell_exec refuses "
         "to start another until one is stopped or ends.")

_job_ids = itertools.count(1)


# No additionalProperties: false in this schema, as before: extra properties are dropped.
class ShellJobsParams(Params, allow_extra=True):
    action: Literal["list", "output", "stop"]
    job_id: str | None = param(default=None, description="e.g. job-1")
    wait_seconds: float = param(default=0, minimum=0, maximum=60)


@dataclass
class ShellJob:
    """A command started with background=true; its output keeps accumulating in the buffers."""

    id: str
    command: str
    cwd: Path
    started: float
    stdout: OutputBuffer
    stderr: OutputBuffer
    task: asyncio.Task[RunResult] | None = None
    result: RunResult | None = None
    stopped: bool = False
    ended: float | None = None  # time.time() when it ended (checkpoints compare with it)

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def status(self) -> str:
        if self.running:
            return "running"
        if self.stopped:
            return "stopped"
        if self.result is not None and self.result.timed_out:
            return "timed_out"
        return "exited"

    def describe(self, with_output: bool = True) -> dict[str, Any]:
        info: dict[str, Any] = {"job_id": self.id, "command": self.command,
                                "status": self.status(), "exit_code": None}
        if self.running or self.result is None:
            info["running_for_ms"] = int((time.monotonic() - self.started) * 1000)
        else:
            info["exit_code"] = self.result.exit_code
            info["duration_ms"] = self.result.duration_ms
        if with_output:
            info["stdout"] = self.stdout.text()
            info["stderr"] = self.stderr.text()
        return info


def start_job(ctx: ToolContext, command: str, start: Path, run_kwargs: dict[str, Any],
              steps: list[Any]) -> ToolResult:
    """Start the checked ``steps`` as a background job of this conversation (``run_kwargs``:
    ``run_steps``'s other arguments), or refuse when too many are running already."""
    jobs: dict[str, ShellJob] = ctx.session.setdefault(SESSION_JOBS, {})
    running = [j for j in jobs.values() if j.running]
    limit = MAX_RUNNING_JOBS_FIELD.value_of(
        ctx.config_for("shell_jobs").get(MAX_RUNNING_JOBS_FIELD.key))
    if len(running) >= limit:
        return ToolResult.error(
            f"{len(running)} background jobs are already running "
            f"({', '.join(j.id for j in running)}); stop one with shell_jobs first.")
    job = ShellJob(id=f"job-{next(_job_ids)}", command=command, cwd=start,
                   started=time.monotonic(), stdout=OutputBuffer(ctx.max_output_bytes),
                   stderr=OutputBuffer(ctx.max_output_bytes))

    async def runner() -> RunResult:
        try:
            result = await run_steps(steps, stdout_buffer=job.stdout,
                                     stderr_buffer=job.stderr, **run_kwargs)
        finally:
            job.ended = time.time()
        job.result = result
        return result

    job.task = asyncio.get_running_loop().create_task(runner(), name=job.id)
    jobs[job.id] = job
    return ToolResult.ok({
        "command": command,
        "job_id": job.id,
        "status": "running",
        "message": f"Started in the background as {job.id}. Use shell_jobs with action "
                   f"'output' and job_id '{job.id}' to read its output, 'stop' to end it.",
    })


def active_jobs(session: Mapping[str, Any], since: float) -> list[str]:
    """The jobs of a conversation (its ``ToolContext.session``) that may have written since
    ``since`` (a ``time.time()``): running now, or ended after it."""
    jobs: Mapping[str, ShellJob] = session.get(SESSION_JOBS) or {}
    return [j.id for j in jobs.values()
            if j.running or (j.ended is not None and j.ended >= since)]


async def stop_jobs(session: Mapping[str, Any]) -> list[str]:
    """Stop every running job of a conversation (it closes, or an undo is about to restore
    the files they write); the ids of those stopped."""
    jobs: Mapping[str, ShellJob] = session.get(SESSION_JOBS) or {}
    stopped: list[str] = []
    for job in list(jobs.values()):
        if job.running and job.task is not None:
            job.stopped = True
            job.task.cancel()
            await asyncio.wait({job.task})  # a cancel of our own still propagates
            stopped.append(job.id)
    return stopped


class ShellJobsTool:
    """Read or stop background jobs started by shell_exec in this conversation."""

    def __init__(self) -> None:
        self.spec = ToolSpec(
            name="shell_jobs",
            description=(
                "Manage background jobs started by shell_exec with background=true: 'list' "
                "shows all jobs, 'output' returns a job's status, exit code and output so far "
                "(wait_seconds waits up to that long for it to finish first), 'stop' kills it "
                "and its child processes."
            ),
            input_schema=ShellJobsParams.json_schema(),
            params=ShellJobsParams,
            category=ToolCategory.EXECUTION,
            risk=RiskLevel.LOW,
            subjects_fn=_jobs_subjects,
            subject_kind="text",
            runs_programs=True,  # it stops processes shell_exec started
            sandboxed=True,  # ... which ran in the sandbox
            # A background job writes while it runs; its changes since the last checkpoint
            # are attributed to the shell_jobs call that reads or stops it.
            changes_files=_jobs_may_change_files,
            read_only=_jobs_reads_only,
            undoable=True,
            config_fields=(MAX_RUNNING_JOBS_FIELD,),
        )

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        p = parse_input(ShellJobsParams, "shell_jobs", input)
        if isinstance(p, ToolResult):
            return p
        jobs: dict[str, ShellJob] = ctx.session.setdefault(SESSION_JOBS, {})
        action, job_id = p.action, p.job_id
        if action == "list":
            return ToolResult.ok({"jobs": [j.describe(with_output=False)
                                           for j in jobs.values()]})
        job = jobs.get(job_id) if job_id is not None else None
        if job is None:
            known = ", ".join(jobs) or "(none)"
            return ToolResult.error(f"Unknown job_id {job_id!r}. Jobs in this conversation: "
                                    f"{known}.")
        if action == "output":
            wait = p.wait_seconds
            if job.running and wait > 0 and job.task:
                try:
                    await asyncio.wait_for(asyncio.shield(job.task), timeout=float(wait))
                except TimeoutError:
                    pass
            return ToolResult.ok(job.describe())
        if action == "stop":
            if job.running and job.task is not None:
                job.stopped = True
                job.task.cancel()
                try:
                    await job.task
                except asyncio.CancelledError:
                    pass
            return ToolResult.ok(job.describe())
        raise AssertionError(f"unhandled action {action!r}")  # Literal: parse refused others


def _jobs_may_change_files(tool_input: Mapping[str, Any]) -> bool:
    return tool_input.get("action") != "list"


def _jobs_reads_only(tool_input: Mapping[str, Any]) -> bool:
    # Reading a job's output changes nothing itself (the job may, and its changes are
    # recorded); stopping one does.
    return tool_input.get("action") in ("list", "output")


def _jobs_subjects(tool_input: Mapping[str, Any], project_root: Path | None = None) -> list[str]:
    """shell_jobs acts on jobs already started; its action is what a rule can name."""
    return [str(tool_input.get("action", ""))]
