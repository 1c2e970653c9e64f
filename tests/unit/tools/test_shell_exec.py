"""shell_exec and shell_jobs: real processes, no shell, isolated environment, kills and caps."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import time
from pathlib import Path

import pytest

from app.core.sandbox import Sandbox
from app.core.tools.base import SubjectError, ToolContext
from app.core.tools.builtin.shell_exec import SESSION_CWD, ShellExecTool
from app.core.tools.default_registry import default_registry
from app.core.tools.shell.jobs import ShellJobsTool

PY = Path(sys.executable).name  # e.g. "python3" or "python"


@pytest.fixture
def ctx(project: Path) -> ToolContext:
    return ToolContext(
        project_root=project,
        allowed_commands=("ls", "cat", "echo", "wc", "false", "true", "git", PY, "sleep",
                          "printf", "head"),
        shell_timeout_s=20,
    )


def unsandboxed(ctx: ToolContext) -> ToolContext:
    """For tests that follow processes by pid: process_runner's own group killing (how a run
    ends where there is no sandbox); in the sandbox, its PID namespace ends them all."""
    return dataclasses.replace(ctx, sandbox=Sandbox.off("following pids"))


@pytest.fixture
def tool() -> ShellExecTool:
    return ShellExecTool()


async def run(tool: ShellExecTool, ctx: ToolContext, command: str, **extra: object) -> dict:
    result = await tool.execute({"command": command, **extra}, ctx)
    assert not result.is_error, result.content
    return json.loads(result.content)


def py(code: str) -> str:
    return f"{PY} -c '{code}'"


def wait_for(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] not in "ZX"
    except (FileNotFoundError, ProcessLookupError):  # gone between open and read: ESRCH
        return False


# --- basic execution ------------------------------------------------------------------------

async def test_result_has_seed_fields(tool: ShellExecTool, ctx: ToolContext) -> None:
    out = await run(tool, ctx, "echo hello 'big world'")
    assert out["stdout"] == "hello big world\n"
    assert out["exit_code"] == 0 and out["success"] is True
    assert out["command"] == "echo hello 'big world'"
    assert isinstance(out["duration_ms"], int) and out["stderr"] == ""


@pytest.mark.parametrize(
    ("command", "stdout", "code"),
    [
        ("echo a && echo b", "a\nb\n", 0),
        ("false && echo no", "", 1),
        ("false || echo yes", "yes\n", 0),
        ("true || echo no; echo always", "always\n", 0),
        ("false; echo after", "after\n", 0),
        ("echo one two three | wc -w", "3\n", 0),
        ("printf 'x\\ny\\nz\\n' | head -n 2 | wc -l", "2\n", 0),
        ("false && echo a || echo b", "b\n", 0),
        ("echo last; false", "last\n", 1),
    ],
)
async def test_chains_and_pipes(tool: ShellExecTool, ctx: ToolContext, command: str,
                                stdout: str, code: int) -> None:
    out = await run(tool, ctx, command)
    assert (out["stdout"], out["exit_code"]) == (stdout, code)


async def test_cat_two_files(tool: ShellExecTool, ctx: ToolContext, project: Path) -> None:
    (project / "a").write_text("A\n")
    (project / "b").write_text("B\n")
    assert (await run(tool, ctx, "cat a; cat b"))["stdout"] == "A\nB\n"
    assert (await run(tool, ctx, "ls | wc -l"))["stdout"].strip() == "2"


async def test_missing_program_is_127(tool: ShellExecTool, project: Path) -> None:
    ctx = ToolContext(project_root=project, allowed_commands=("no-such-program-xyz", "echo"))
    out = await run(tool, ctx, "no-such-program-xyz || echo fallback")
    assert out["stdout"] == "fallback\n" and "command not found" in out["stderr"]


async def test_arguments_are_not_reinterpreted(tool: ShellExecTool, ctx: ToolContext,
                                               project: Path) -> None:
    out = await run(tool, ctx, "echo '$(touch pwned)' '`touch pwned`' '; touch pwned'")
    assert out["stdout"] == "$(touch pwned) `touch pwned` ; touch pwned\n"
    assert not (project / "pwned").exists()


# --- refusals -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("command", "needle"),
    [
        ("echo hi > out.txt", "redirection"),
        ("rm -rf data", "not on the allowed command list"),
        ("ls && rm -rf data", "`rm`"),
        ("/bin/rm -rf data", "exact name"),
        ("echo $(rm -rf data)", "command substitution"),
        ("sh -c 'rm -rf data'", "shells"),
    ],
)
async def test_refused_commands_do_nothing(tool: ShellExecTool, ctx: ToolContext, project: Path,
                                           command: str, needle: str) -> None:
    (project / "data").mkdir()
    result = await tool.execute({"command": command}, ctx)
    assert result.is_error
    assert needle in result.content
    assert (project / "data").is_dir()
    assert not (project / "out.txt").exists()


def test_subjects_split_chains() -> None:
    spec = ShellExecTool().spec
    assert spec.subjects({"command": "git status && rm -rf x"}) == ["git status", "rm -rf x"]
    with pytest.raises(SubjectError) as info:
        spec.subjects({"command": "ls $(rm -rf x)"})
    assert "rm -rf x" in info.value.partial
    assert spec.category.value == "execution" and spec.risk.value == "high"


# --- working directory ------------------------------------------------------------------------

async def test_cd_persists_across_calls(tool: ShellExecTool, ctx: ToolContext,
                                        project: Path) -> None:
    (project / "sub" / "deeper").mkdir(parents=True)
    out = await run(tool, ctx, "cd sub && pwd")
    assert out["stdout"].strip() == str(project / "sub")
    assert ctx.session[SESSION_CWD] == str(project / "sub")
    out = await run(tool, ctx, "pwd")
    assert out["stdout"].strip() == str(project / "sub")
    out = await run(tool, ctx, "cd deeper; pwd; cd; pwd")
    assert out["stdout"].split() == [str(project / "sub" / "deeper"), str(project)]


async def test_cd_cannot_leave_project(tool: ShellExecTool, ctx: ToolContext,
                                       project: Path) -> None:
    (project.parent / "outside").mkdir()
    (project / "link").symlink_to(project.parent / "outside")
    for target in ("..", "/", "link", "../outside"):
        out = await run(tool, ctx, f"cd {target} && echo moved")
        assert out["exit_code"] == 1 and out["stdout"] == ""
        assert "outside the project folder" in out["stderr"]
    assert (await run(tool, ctx, "pwd"))["stdout"].strip() == str(project)


async def test_working_dir_parameter(tool: ShellExecTool, ctx: ToolContext,
                                     project: Path) -> None:
    (project / "pkg").mkdir()
    out = await run(tool, ctx, "pwd", working_dir="pkg")
    assert out["stdout"].strip() == str(project / "pkg")
    for bad in ("..", "/tmp", "missing"):
        result = await tool.execute({"command": "pwd", "working_dir": bad}, ctx)
        assert result.is_error


# --- environment ------------------------------------------------------------------------------

async def test_child_environment_has_no_secrets(tool: ShellExecTool, ctx: ToolContext,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value")
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "brave-secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    out = await run(tool, ctx, py("import os,json; print(json.dumps(dict(os.environ)))"))
    env = json.loads(out["stdout"])
    assert "ANTHROPIC_API_KEY" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    assert "secret" not in out["stdout"]
    assert env["TERM"] == "dumb" and env["PATH"]


# --- limits -----------------------------------------------------------------------------------

async def test_output_is_capped_with_marker(tool: ShellExecTool, project: Path) -> None:
    ctx = ToolContext(project_root=project, allowed_commands=(PY,), max_output_bytes=1000)
    out = await run(tool, ctx, py("print(\"B\" + \"x\" * 100000 + \"E\")"))
    assert len(out["stdout"]) < 1300
    assert "truncated" in out["stdout"]
    assert out["stdout"].startswith("B") and out["stdout"].rstrip().endswith("E")


GRANDCHILD = (
    "import subprocess, sys, time; "
    "p = subprocess.Popen([\"sleep\", \"60\"]); "
    "open(\"pids\", \"w\").write(str(p.pid)); "
    "time.sleep(60)"
)


async def test_timeout_kills_grandchildren(tool: ShellExecTool, ctx: ToolContext,
                                           project: Path) -> None:
    ctx = unsandboxed(ctx)  # the pid written inside a sandbox is its own namespace's
    started = time.monotonic()
    result = await tool.execute({"command": py(GRANDCHILD), "timeout": 1.5}, ctx)
    assert time.monotonic() - started < 10
    assert result.is_error and "timed out" in result.content
    pid = int((project / "pids").read_text())
    assert wait_for(lambda: not alive(pid)), "grandchild survived the timeout"


async def test_cancellation_kills_process_group(tool: ShellExecTool, ctx: ToolContext,
                                                project: Path) -> None:
    ctx = unsandboxed(ctx)  # the pid written inside a sandbox is its own namespace's
    task = asyncio.create_task(tool.execute({"command": py(GRANDCHILD)}, ctx))
    deadline = time.monotonic() + 10
    while not (project / "pids").exists() or not (project / "pids").read_text():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    pid = int((project / "pids").read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_for(lambda: not alive(pid)), "grandchild survived cancellation"


async def test_timeout_parameter_validated(tool: ShellExecTool, ctx: ToolContext) -> None:
    assert (await tool.execute({"command": "true", "timeout": 10**6}, ctx)).is_error
    assert (await tool.execute({"command": "true", "timeout": -1}, ctx)).is_error


# --- background jobs ----------------------------------------------------------------------------

async def test_background_job_output_and_stop(tool: ShellExecTool, ctx: ToolContext,
                                              project: Path) -> None:
    ctx = unsandboxed(ctx)  # the pid written inside a sandbox is its own namespace's
    jobs = ShellJobsTool()
    code = ("import os, time; print(\"ready\", flush=True); "
            "open(\"pid\", \"w\").write(str(os.getpid())); time.sleep(60)")
    started = json.loads((await tool.execute({"command": py(code), "background": True},
                                             ctx)).content)
    job_id = started["job_id"]
    deadline = time.monotonic() + 10
    while True:
        out = json.loads((await jobs.execute({"action": "output", "job_id": job_id}, ctx)).content)
        if "ready" in out["stdout"] and (project / "pid").exists():
            break
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    assert out["status"] == "running"
    listed = json.loads((await jobs.execute({"action": "list"}, ctx)).content)
    assert [j["job_id"] for j in listed["jobs"]] == [job_id]
    pid = int((project / "pid").read_text())
    stopped = json.loads((await jobs.execute({"action": "stop", "job_id": job_id}, ctx)).content)
    assert stopped["status"] == "stopped"
    assert wait_for(lambda: not alive(pid))


async def test_background_job_finishes(tool: ShellExecTool, ctx: ToolContext) -> None:
    jobs = ShellJobsTool()
    started = json.loads((await tool.execute({"command": "echo done", "background": True},
                                             ctx)).content)
    out = json.loads((await jobs.execute({"action": "output", "job_id": started["job_id"],
                                          "wait_seconds": 10}, ctx)).content)
    assert out["status"] == "exited" and out["exit_code"] == 0 and out["stdout"] == "done\n"
    assert (await jobs.execute({"action": "output", "job_id": "job-999"}, ctx)).is_error


async def test_background_refused_command_never_starts(tool: ShellExecTool,
                                                       ctx: ToolContext) -> None:
    result = await tool.execute({"command": "sleep 5 > x", "background": True}, ctx)
    assert result.is_error and SESSION_CWD not in ctx.session


# --- through the registry -----------------------------------------------------------------------

async def test_registry_executes_shell_exec(ctx: ToolContext) -> None:
    registry = default_registry()
    result = await registry.execute("shell_exec", {"command": "echo via-registry"}, ctx)
    assert not result.is_error and "via-registry" in result.content
    assert registry.get("shell_jobs") is not None
