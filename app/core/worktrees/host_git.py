"""Tebiki's own git, on the host (outside the sandbox), for the run workspaces: argv only, the
hardening of app.core.tools.git_safety (no hooks, no fsmonitor, no repository programs, no
network), bounded output and time. Never a program a model chose."""

from __future__ import annotations

from pathlib import Path

from app.core.tools.git_safety import safe_git_env
from app.core.tools.process_runner import RunResult, minimal_env, run_argv

GIT_TIMEOUT_S = 300.0
MAX_OUTPUT = 64 * 1024 * 1024


class WorktreeError(RuntimeError):
    """A workspace operation that failed; the message says what and why."""


async def host_git(cwd: Path, *args: str, check: bool = True,
                   max_output: int = MAX_OUTPUT) -> RunResult:
    env = await safe_git_env(cwd, base_env=minimal_env(project_root=cwd))
    result = await run_argv(["git", *args], cwd=cwd, timeout_s=GIT_TIMEOUT_S,
                            max_output_bytes=max_output, env=env)
    if check and not result.success:
        raise WorktreeError(f"git {args[0]} failed in {cwd}: "
                            f"{(result.stderr or result.stdout).strip()[:500]}")
    return result
