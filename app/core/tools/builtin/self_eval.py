"""self_eval: run the project's quality checks (build, lint, type_check, test) and report each.

Why configured commands: the model only chooses *which* checks run; the commands come from the
tool configuration (``ctx.config_for("self_eval")["checks"]``: name → command line, or null to
disable) or, when not configured, are detected from the project (pyproject.toml → ruff / mypy /
pytest, package.json scripts, Cargo.toml, go.mod). They run through the same executor as
shell_exec — parsed, no shell, minimal environment, timeout with process-group kill, capped
output — but are not limited by shell_exec's allowlist, because the person configured them.
They also run in git_safety's environment, so a git that a build or test runner starts cannot
be made to run programs by the repository's git config (``git_run_hooks`` lets hooks run).

Every check runs in the OS sandbox (``command_sandbox``, the same wall as shell_exec's): it can
write only in the tool's write folders (the project folder by default) and a private /tmp, the
project's ``.git`` stays read-only, secrets are hidden, and the network is off unless the
tool's Configure… turns it on. When the sandbox is required and missing, no check starts.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from app.core.safe_read import read_project_text
from app.core.sandbox import SandboxRequired
from app.core.tools.base import (
    RiskLevel,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
    parse_input,
)
from app.core.tools.builtin.shell_exec import SHELL_TIMEOUT_FIELD
from app.core.tools.command_sandbox import (
    NETWORK_FIELD,
    WRITE_FOLDERS_FIELD,
    command_confinement,
)
from app.core.tools.config_fields import ConfigField, FieldKind
from app.core.tools.git_safety import GitSafetyError, safe_git_env
from app.core.tools.params.declaration import Params, param
from app.core.tools.process_runner import minimal_env, run_steps
from app.core.tools.shell.syntax import parse_command

CHECKS = ("build", "lint", "type_check", "test")
DEFAULT_CHECKS = ("build", "lint", "type_check")  # as in the seed: tests only when asked
MIN_TIMEOUT_S = 120.0
MIN_EXCERPT_BYTES = 4_000


# No additionalProperties: false in this schema, as before: extra properties are dropped.
class SelfEvalParams(Params, allow_extra=True):
    # CHECKS, in its order (a test checks they agree).
    checks: list[Literal["build", "lint", "type_check", "test"]] | None = param(
        default=None, description="Which checks to run (default: build, lint, type_check)")


def detect_checks(root: Path) -> dict[str, str]:
    """Sensible default commands for the project in ``root`` (missing checks are omitted)."""
    checks: dict[str, str] = {}
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() or (root / "setup.py").is_file() or (root / "setup.cfg").is_file():
        checks.update(_python_checks(root, pyproject))
    package = root / "package.json"
    if package.is_file():
        for name, command in _node_checks(root, package).items():
            checks.setdefault(name, command)
    if (root / "Cargo.toml").is_file():
        for name, command in {"build": "cargo build", "lint": "cargo clippy",
                              "type_check": "cargo check", "test": "cargo test"}.items():
            checks.setdefault(name, command)
    if (root / "go.mod").is_file():
        for name, command in {"build": "go build ./...", "lint": "go vet ./...",
                              "test": "go test ./..."}.items():
            checks.setdefault(name, command)
    return checks


def _python_tool(root: Path, tool: str) -> str:
    """Prefer the project's virtualenv, then PATH, then `python3 -m tool`."""
    for venv in (".venv", "venv"):
        if (root / venv / "bin" / tool).is_file():
            return f"{venv}/bin/{tool}"
    if shutil.which(tool):
        return tool
    return f"python3 -m {tool}"


def _python_checks(root: Path, pyproject: Path) -> dict[str, str]:
    tools: dict[str, Any] = {}
    text = ""
    if pyproject.is_file():
        import tomllib  # here, not at the top: start-up imports this module, not a run

        try:
            text = read_project_text(pyproject, errors="strict")
            tools = tomllib.loads(text).get("tool", {})
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            tools = {}
    checks: dict[str, str] = {}
    if "ruff" in tools or (root / "ruff.toml").is_file() or (root / ".ruff.toml").is_file() \
            or "ruff" in text:
        checks["lint"] = f"{_python_tool(root, 'ruff')} check ."
    if "mypy" in tools or (root / "mypy.ini").is_file() or "mypy" in text:
        checks["type_check"] = f"{_python_tool(root, 'mypy')} ."
    if "pytest" in tools or (root / "pytest.ini").is_file() or (root / "tests").is_dir() \
            or "pytest" in text:
        checks["test"] = f"{_python_tool(root, 'pytest')} -q"
    return checks


def _node_checks(root: Path, package: Path) -> dict[str, str]:
    try:
        scripts = json.loads(read_project_text(package, errors="strict")).get("scripts", {}) or {}
    except (OSError, ValueError, AttributeError):
        return {}
    if not isinstance(scripts, dict):
        return {}
    if (root / "bun.lockb").is_file() or (root / "bun.lock").is_file():
        runner = "bun run"
    elif (root / "pnpm-lock.yaml").is_file():
        runner = "pnpm run"
    elif (root / "yarn.lock").is_file():
        runner = "yarn run"
    else:
        runner = "npm run"
    checks: dict[str, str] = {}
    for check, names in (("build", ("build",)), ("lint", ("lint",)),
                         ("type_check", ("typecheck", "type-check", "type_check", "check",
                                         "tsc")),
                         ("test", ("test",))):
        for name in names:
            script = scripts.get(name)
            if isinstance(script, str) and "no test specified" not in script:
                checks[check] = f"{runner} {name}"
                break
    return checks


class SelfEvalTool:
    def __init__(self) -> None:
        self.spec = ToolSpec(
            name="self_eval",
            description=(
                "Run the project's quality checks and report per check whether it passed, its "
                "exit code, output excerpts (beginning and end) and duration. Checks: build, "
                "lint, type_check, test (default: build, lint, type_check). The commands come "
                "from the tool configuration or are detected from the project (pyproject.toml, "
                "package.json, Cargo.toml, go.mod). Use it after making changes. The checks "
                "run in a sandbox: they can write only in the project folder (or the "
                "configured write folders) and reach the network only when the person "
                "enabled it."
            ),
            input_schema=SelfEvalParams.json_schema(),
            params=SelfEvalParams,
            category=ToolCategory.COMPOSITE,
            risk=RiskLevel.HIGH,
            subjects_fn=_check_subjects,
            subject_kind="text",
            config_fields=(
                SHELL_TIMEOUT_FIELD,
                ConfigField("checks", "Checks", FieldKind.TEXT_MAP, default={},
                            choices=tuple((c, c.replace("_", " ").capitalize())
                                          for c in CHECKS),
                            placeholder="detected from the project"),
                WRITE_FOLDERS_FIELD,
                NETWORK_FIELD,
            ),
            runs_programs=True,
            sandboxed=True,
            changes_files=True,  # builds and formatters write into the project
            undoable=True,
        )

    def commands(self, ctx: ToolContext) -> dict[str, str]:
        """Configured commands override detected ones; a null/empty value disables a check."""
        configured = ctx.config_for("self_eval").get("checks")
        commands = detect_checks(ctx.project_root)
        if isinstance(configured, Mapping):
            for name, command in configured.items():
                if name not in CHECKS:
                    continue
                if command:
                    commands[name] = str(command)
                else:
                    commands.pop(name, None)
        return commands

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        p = parse_input(SelfEvalParams, "self_eval", input)
        if isinstance(p, ToolResult):
            return p
        # Omitted means the default set; an explicit list makes a missing command a failure.
        explicit = p.checks is not None
        requested: list[str] = list(dict.fromkeys(
            p.checks if p.checks is not None else DEFAULT_CHECKS))
        commands = self.commands(ctx)
        config = ctx.config_for("self_eval")
        timeout = float(config.get("timeout_s", max(ctx.shell_timeout_s, MIN_TIMEOUT_S)))
        excerpt = max(MIN_EXCERPT_BYTES, ctx.max_output_bytes // max(1, 2 * len(requested)))
        try:
            # Before anything starts (safe_git_env may run git): a required sandbox that is
            # missing means no check runs at all.
            confinement = command_confinement(ctx, "self_eval")
        except SandboxRequired as exc:
            return ToolResult.error(f"self_eval did not run the checks. {exc}")
        try:
            # allow_network: test suites legitimately fetch from local or remote fixtures
            env = await safe_git_env(ctx.project_root,
                                     base_env=minimal_env(project_root=ctx.project_root),
                                     run_hooks=bool(config.get("git_run_hooks")),
                                     allow_network=True)
        except GitSafetyError as exc:
            return ToolResult.error(f"self_eval did not run the checks: {exc}")
        results: dict[str, Any] = {}
        skipped: dict[str, str] = {}
        all_passed = True
        for name in requested:
            command = commands.get(name)
            if not command:
                skipped[name] = ("not configured and not detected for this project; the person "
                                 "can set a command in the self_eval configuration")
                if explicit:
                    all_passed = False
                continue
            parsed = parse_command(command)
            if not parsed.ok:
                results[name] = {"command": command, "passed": False, "exit_code": None,
                                 "error": "the configured command is not runnable without a "
                                          "shell: " + "; ".join(parsed.problems),
                                 "duration_ms": 0}
                all_passed = False
                continue
            run = await run_steps(parsed.steps, cwd=ctx.project_root, root=ctx.project_root,
                                  timeout_s=timeout, max_output_bytes=excerpt, env=env,
                                  confinement=confinement)
            entry: dict[str, Any] = {
                "command": command,
                "passed": run.success,
                "exit_code": run.exit_code,
                "stdout": run.stdout,
                "stderr": run.stderr,
                "duration_ms": run.duration_ms,
            }
            if run.timed_out:
                entry["error"] = f"timed out after {timeout:g} s"
            results[name] = entry
            all_passed = all_passed and run.success
        if not results:
            all_passed = False
        payload: dict[str, Any] = {"all_passed": all_passed, "checks": results,
                                   "total_checks": len(results),
                                   "sandboxed": confinement is not None}
        if skipped:
            payload["skipped"] = skipped
        return ToolResult.ok(payload)


def create() -> SelfEvalTool:
    return SelfEvalTool()


def _check_subjects(tool_input: Mapping[str, Any], project_root: Path | None = None) -> list[str]:
    """The names of the checks a call runs: rules can allow `test` but not `build`."""
    return sorted(set(tool_input.get("checks") or DEFAULT_CHECKS)) or ["(none)"]
