"""shell_exec: run a command line without a shell (``create()`` also lists shell_jobs).

This module decides whether, where and how a command runs; the background jobs it starts, and
the shell_jobs tool that reads or stops them, are ``app.core.tools.shell.jobs``.

Why no shell: the command is parsed (``shell.syntax``), checked against the allowlist and the
option-escape tables (``shell.policy``), and the parsed structure is executed directly
(``process_runner``): what was checked is exactly what runs. ``cd`` persists across calls of one
conversation (``ToolContext.session``) and cannot leave the project folder. Every process runs in
git_safety's environment for its working directory, so any git it starts — directly, through
``timeout``, or from ``make`` — cannot be made to run programs by the repository's config.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.sandbox import SandboxRequired
from app.core.sandbox.toolchains import user_toolchains
from app.core.sensitive_paths import is_secret_name
from app.core.tools.base import (
    DEFAULT_ALLOWED_COMMANDS,
    GitPermission,
    RiskLevel,
    SubjectError,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
    parse_input,
)
from app.core.tools.capability_lift import CapabilityLift
from app.core.tools.command_sandbox import (
    NETWORK_FIELD,
    WRITE_FOLDERS_FIELD,
    command_confinement,
)
from app.core.tools.config_fields import ConfigField, FieldKind
from app.core.tools.git_safety import GIT_ENV, safe_git_env
from app.core.tools.params.declaration import Params, param
from app.core.tools.process_runner import EnvHook, minimal_env, run_steps
from app.core.tools.shell.jobs import ShellJobsTool, start_job
from app.core.tools.shell.subjects import command_subjects

if TYPE_CHECKING:
    from app.core.tools.shell.policy import PolicyResult

# The policy tables are imported by the first check (``_check``), not at start-up; the run
# warm-up (app.core.warmup) imports them off the GUI thread before a model can call the tool.
WARMUP_IMPORTS: tuple[str, ...] = ("app.core.tools.shell.policy",)

SESSION_CWD = "shell_cwd"
DEFAULT_MAX_TIMEOUT_S = 600.0
DEFAULT_BACKGROUND_TIMEOUT_S = 3600.0

# Shared with self_eval, whose checks run under the same timeout capability.
SHELL_TIMEOUT_FIELD = ConfigField("shell_timeout_s", "Timeout", FieldKind.SECONDS, default=30.0)

LEVEL_ALLOWLIST = "allowlist"
LEVEL_ANY_SANDBOXED = "any_sandboxed"
# New profiles' choice (ShellExecTool's default_config): decided at run time from the sandbox
# status, never stored as one machine's answer, so a profile on a machine without a sandbox
# falls back to the allowlist by itself. A profile (or context) that names no level keeps the
# allowlist, as before: existing profiles change only when the person chooses.
LEVEL_AUTO = "auto"
LEVEL_FIELD = ConfigField(
    "program_level", "Programs", FieldKind.CHOICE, default=LEVEL_ALLOWLIST,
    choices=((LEVEL_AUTO, "Any program where the sandbox works, else allowed programs only"),
             (LEVEL_ALLOWLIST, "Allowed programs only"),
             (LEVEL_ANY_SANDBOXED, "Any program, sandboxed")),
    help="Allowed programs only: every program must be on the list below and known escapes "
         "through its options are refused (in the sandbox when there is one). Any program, "
         "sandboxed: the list no longer applies and the sandbox is the wall — only where a "
         "working sandbox exists. The first choice (the default) is the second where the "
         "sandbox works and the first where it does not, decided each time a command runs "
         "(new profiles start with it).")


def program_level(ctx: ToolContext) -> str:
    """The level in force for this call: the configured one, ``auto`` resolved."""
    level = LEVEL_FIELD.parse(ctx.config_for("shell_exec").get(LEVEL_FIELD.key))
    if level == LEVEL_AUTO:
        return LEVEL_ANY_SANDBOXED if ctx.sandbox.status.available else LEVEL_ALLOWLIST
    return str(level) if level else LEVEL_ALLOWLIST


GIT_LEVEL_FIELD = ConfigField(
    "git_permission", "Project .git", FieldKind.CHOICE, default=GitPermission.READ_ONLY.value,
    choices=((GitPermission.READ_ONLY.value, "Read-only"),
             (GitPermission.READ_WRITE.value, "Read-write (commit, checkout)")),
    help="Read-write lets commands change the project's .git (commit, branch, checkout); its "
         "config and hooks stay read-only either way.")


# No additionalProperties: false in this schema, as before: extra properties are dropped.
class ShellExecParams(Params, allow_extra=True):
    command: str = param(description="The command line, e.g. 'git status && git diff --stat' "
                                     "or 'pytest -q tests/unit'")
    working_dir: str | None = param(
        default=None,
        description="Directory to run in, relative to the project folder (default: the current "
                    "directory, which cd changes)")
    # None: the configured timeout (ToolContext.shell_timeout_s, or the background one).
    timeout: float | None = param(default=None, exclusive_minimum=0,
                                  description="Timeout in seconds (default from the tool "
                                              "configuration)")
    background: bool = param(default=False,
                             description="Start the command and return a job id at once (see "
                                         "shell_jobs)")


def _subjects(tool_input: Mapping[str, Any], project_root: Path | None = None) -> list[str]:
    command = tool_input.get("command")
    if not isinstance(command, str):
        raise SubjectError("command must be a string")
    # Canonical subjects: rules hold through wrappers and git global options (shell.subjects).
    return command_subjects(command)


# An absolute or home-relative path inside a command line: after a start, a space, a quote,
# "=", "(" or ","; not the "//host/path" of a URL (preceded by ":").
_PATH_IN_TEXT = re.compile(r"""(?:(?<=^)|(?<=[\s'"=(,]))(~[^\s'"(),;]*|/[^\s'"(),;]*)""")
_WORDS = re.compile(r"""[\s'"=(),;]+""")
# Folders every program reads (or the sandbox makes private): naming them is not reaching
# outside the project.
_SYSTEM_PREFIXES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt",
                    "/dev", "/proc", "/sys", "/tmp", "/run/current-system", "/nix")


def _in_toolchain(path: str) -> bool:
    """A toolchain the sandbox shows every program read-only (``~/.pyenv/…/python3``): like
    the system folders, naming it is not reaching the person's data. Its secrets (cargo's
    credentials) stay hidden by the sandbox whatever a command names."""
    return not is_secret_name(os.path.basename(path)) and any(
        path == str(root) or path.startswith(f"{root}/")
        for root in user_toolchains(Path.home()))


def named_paths(tool_input: Mapping[str, Any], project_root: Path | None = None) -> list[str]:
    """The absolute and ``~`` paths a command names (in any argument, also inside code such as
    ``python -c "open('/home/me/x')"``), resolved, except system folders and toolchains every
    program reads;
    relative ones that climb out (``../x``) or name a secret by its file name (``.env``).
    Other relative paths stay in the project: ``cd`` cannot leave it and the tool runs there."""
    command = tool_input.get("command")
    if not isinstance(command, str):
        return []
    out: list[str] = []
    for match in _PATH_IN_TEXT.finditer(command):
        raw = match.group(1)
        if raw in ("/", "~") or raw.startswith("~") or not raw.startswith(_SYSTEM_PREFIXES):
            try:
                path = os.path.realpath(os.path.expanduser(raw))
            except (OSError, ValueError):
                continue
            if (path == "/" or not path.startswith(_SYSTEM_PREFIXES)
                    or raw.startswith("~")) and not _in_toolchain(path):
                out.append(path)
    # Relative paths that climb ("../x"): resolved from the project folder (the session's
    # folder is inside it, so this can only err towards "outside").
    base = project_root if project_root is not None else Path.cwd()
    for word in _WORDS.split(command):
        if word == ".." or word.startswith("../") or "/../" in word or word.endswith("/.."):
            out.append(os.path.realpath(base / word))
        elif word and not word.startswith(("/", "~")) and \
                is_secret_name(word.rstrip("/").rsplit("/", 1)[-1]):
            # A secret the command names (``cat .env``, ``open('.env')`` in code): the
            # sensitive-path guard shows the call, and its approval lets the sandbox show it.
            out.append(os.path.realpath(base / word))
    return list(dict.fromkeys(out))


def _project_root(ctx: ToolContext) -> Path:
    return ctx.project_root


def _session_cwd(ctx: ToolContext) -> Path:
    project_root = _project_root(ctx)
    saved = ctx.session.get(SESSION_CWD)
    if saved:
        path = Path(saved)
        if path.is_dir() and path.resolve().is_relative_to(project_root):
            return path.resolve()
    return project_root


def _start_dir(ctx: ToolContext, working_dir: str | None) -> Path | str:
    """The directory to start in, or an error text."""
    project_root = _project_root(ctx)
    if not working_dir:
        return _session_cwd(ctx)
    candidate = Path(working_dir)
    if not candidate.is_absolute():
        candidate = project_root / candidate
    try:
        resolved = candidate.resolve()
    except OSError as exc:
        return f"working_dir {working_dir!r}: {exc}"
    if not resolved.is_relative_to(project_root):
        return (f"working_dir {working_dir!r} is outside the project folder {project_root}; use a "
                "folder inside it (relative paths are relative to the project folder).")
    if not resolved.is_dir():
        return f"working_dir {working_dir!r} is not a directory."
    return resolved


def shell_env(ctx: ToolContext) -> dict[str, str]:
    return minimal_env(GIT_ENV, project_root=_project_root(ctx))


def _git_safe_env_hook(ctx: ToolContext, env: Mapping[str, str]) -> EnvHook:
    """Every process, not only a literal `git`, gets the safe git environment of the folder it
    starts in: git reached through a wrapper or another program inherits it, and a `cd` into a
    submodule or a nested repository gets that repository's drivers neutralised."""
    run_hooks = bool(ctx.config_for("shell_exec").get("git_run_hooks"))

    async def hook(argv: list[str], cwd: Path) -> Mapping[str, str]:
        return await safe_git_env(cwd, base_env=env, run_hooks=run_hooks, allow_network=True)
    return hook


def _check(ctx: ToolContext, command: str) -> PolicyResult | str:
    """The policy check of the configured level, or why the level cannot be used."""
    # Imported here, not at the top: start-up imports this module to list the tool, and the
    # policy tables (~12 ms) are only needed to run a command (the run warm-up loads them).
    from app.core.tools.shell.policy import check_command, check_structure

    if program_level(ctx) != LEVEL_ANY_SANDBOXED:
        return check_command(command, ctx.allowed_commands)
    if not ctx.sandbox.status.available:
        return ("The command was not run: shell_exec is set to run any program in the sandbox, "
                f"and there is no working sandbox here ({ctx.sandbox.status.reason}). The "
                "person can fix the sandbox or choose \"Allowed programs only\" in "
                "shell_exec's Configure… dialog.")
    return check_structure(command)


def _capability_refusal(tool_input: Mapping[str, Any], ctx: ToolContext) -> str | None:
    """The policy's refusal of the command under this configuration, before anyone is asked."""
    command = tool_input.get("command")
    if not isinstance(command, str):
        return None  # the tool reports malformed input itself
    policy = _check(ctx, command)
    if isinstance(policy, str):
        return policy
    if policy.ok:
        return None
    hint = ""
    if policy.parsed.ok and program_level(ctx) == LEVEL_ALLOWLIST:
        hint = ("\nThe person can lift this in shell_exec's Configure… dialog: add the program "
                "to Allowed programs" + (", or set Programs to \"Any program, sandboxed\"."
                                         if ctx.sandbox.status.available else "."))
    return policy.error_message(ctx.allowed_commands) + hint


def _capability_lift(tool_input: Mapping[str, Any], ctx: ToolContext) -> CapabilityLift | None:
    """Under "Allowed programs only": add the command's programs that are not on the list."""
    command = tool_input.get("command")
    if not isinstance(command, str) or program_level(ctx) != LEVEL_ALLOWLIST:
        return None
    from app.core.tools.shell.syntax import parse_command

    parsed = parse_command(command)
    if not parsed.ok:
        return None
    allowed = list(ctx.allowed_commands)
    missing = [p for p in dict.fromkeys(c.program for c in parsed.commands)
               if p and p not in allowed and "/" not in p and p not in ("cd", "pwd")]
    if not missing:
        return None
    names = ", ".join(f"“{p}”" for p in missing)
    return CapabilityLift("allowed_commands", (*allowed, *missing),
                          f"add {names} to Allowed programs")


def _timeout(ctx: ToolContext, value: float | None, background: bool) -> float | str:
    config = ctx.config_for("shell_exec")
    maximum = float(config.get("max_timeout_s", max(DEFAULT_MAX_TIMEOUT_S, ctx.shell_timeout_s)))
    if value is None:
        if background:
            return float(config.get("background_timeout_s", DEFAULT_BACKGROUND_TIMEOUT_S))
        return ctx.shell_timeout_s
    if background:
        maximum = max(maximum, float(config.get("background_timeout_s",
                                                DEFAULT_BACKGROUND_TIMEOUT_S)))
    if value > maximum:
        return f"timeout {value:g} s exceeds the maximum of {maximum:g} s"
    return float(value)


class ShellExecTool:
    def __init__(self) -> None:
        self.spec = ToolSpec(
            name="shell_exec",
            description=(
                "Run a command and return stdout/stderr and the exit code. The command is "
                "executed directly, without a shell: plain commands with quoted arguments, "
                "joined by &&, ||, ; or | are supported; $VARS, $(...), globs (*), redirection "
                "(>, <), subshells, loops and & are refused with an explanation. Every program "
                "must be on the allowed command list. `cd DIR` changes the working directory for "
                "later calls (it must stay inside the project). Use background=true for "
                "long-running commands (servers, watchers); then use shell_jobs to read their "
                "output or stop them."
            ),
            input_schema=ShellExecParams.json_schema(),
            params=ShellExecParams,
            category=ToolCategory.EXECUTION,
            risk=RiskLevel.HIGH,
            prompt_conventions=(
                "shell_exec runs a program directly, without a shell: plain commands with "
                "quoted arguments joined by &&, ||, ; or | work, but $VARS, $(...), globs, "
                "redirection (> <), subshells, loops and & are refused, and only allowed "
                "programs run.",
                "Use shell_exec with background=true for servers and watchers, then "
                "shell_jobs to read their output or stop them.",
            ),
            prompt_order=70,
            subjects_fn=_subjects,
            subject_kind="text",
            default_config={LEVEL_FIELD.key: LEVEL_AUTO},
            config_fields=(
                ConfigField("allowed_commands", "Allowed programs", FieldKind.PROGRAM_LIST,
                            default=DEFAULT_ALLOWED_COMMANDS,
                            placeholder="one program name per line, e.g. git"),
                SHELL_TIMEOUT_FIELD,
                LEVEL_FIELD,
                WRITE_FOLDERS_FIELD,
                NETWORK_FIELD,
                GIT_LEVEL_FIELD,
            ),
            runs_programs=True,
            sandboxed=True,
            changes_files=True,
            undoable=True,
            named_paths=named_paths,
            capability_refusal=_capability_refusal,
            capability_lift=_capability_lift,
            # Each command of a chain is a subject: the person must read every one of them.
            subjects_heading="Commands that will run",
        )

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        p = parse_input(ShellExecParams, "shell_exec", input)
        if isinstance(p, ToolResult):
            return p
        command, background = p.command, p.background
        policy = _check(ctx, command)
        if isinstance(policy, str):
            return ToolResult.error(policy)
        if not policy.ok:
            return ToolResult.error(policy.error_message(ctx.allowed_commands))
        try:
            confinement = command_confinement(ctx, "shell_exec")
        except SandboxRequired as exc:
            return ToolResult.error(f"The command was not run. {exc}")
        start = _start_dir(ctx, p.working_dir)
        if isinstance(start, str):
            return ToolResult.error(start)
        timeout = _timeout(ctx, p.timeout, background)
        if isinstance(timeout, str):
            return ToolResult.error(timeout)
        env = shell_env(ctx)
        kwargs: dict[str, Any] = dict(cwd=start, root=_project_root(ctx), timeout_s=timeout,
                                      max_output_bytes=ctx.max_output_bytes, env=env,
                                      env_hook=_git_safe_env_hook(ctx, env),
                                      confinement=confinement)
        if background:
            return start_job(ctx, command, start, kwargs, policy.parsed.steps)
        result = await run_steps(policy.parsed.steps, **kwargs)
        if result.cwd is not None and result.cwd != start:
            ctx.session[SESSION_CWD] = str(result.cwd)
        payload: dict[str, Any] = {
            "command": command,
            "exit_code": result.exit_code,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "duration_ms": result.duration_ms,
            "success": result.success,
            "sandboxed": result.sandboxed,
        }
        if result.cwd is not None and result.cwd != _project_root(ctx):
            payload["cwd"] = str(result.cwd)
        if result.timed_out:
            payload["timed_out"] = True
            return ToolResult.error(_json(payload))
        return ToolResult.ok(payload)


def _json(payload: Mapping[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=2)


def create() -> list[Any]:
    return [ShellExecTool(), ShellJobsTool()]
