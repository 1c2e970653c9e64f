"""One custom tool: its spec, argv rendered from the template, and running it.

The program runs in the OS sandbox (``command_sandbox``, the same wall as shell_exec's): it can
write only in the tool's ``write_folders`` (the project folder by default) and a private /tmp,
reaches the network only with ``network = true``, and a project's tool can never make a folder
outside the project writable.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.sandbox import SandboxRequired
from app.core.tools.base import (
    RiskLevel,
    SubjectError,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
)
from app.core.tools.command_sandbox import (
    WRITE_FOLDERS_FIELD,
    command_confinement,
)
from app.core.tools.command_sandbox import write_folders as resolve_write_folders
from app.core.tools.git_safety import GitSafetyError, safe_git_env
from app.core.tools.process_runner import minimal_env, run_steps
from app.core.tools.providers.custom.template import Param, Placeholder, RenderError, Word
from app.core.tools.shell.syntax import ChainStep, Pipeline, SimpleCommand

# -- one tool --------------------------------------------------------------------------------

PROJECT_SERVER_ID = "project"


@dataclass(frozen=True)
class ToolSource:
    path: Path
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line else str(self.path)


@dataclass
class CustomTool:
    """A tool defined by a TOML table; ``execute`` runs the rendered argv without a shell."""

    name: str
    description: str
    command: str
    words: list[Word]
    params: dict[str, Param]
    risk: RiskLevel = RiskLevel.HIGH
    category: ToolCategory = ToolCategory.EXECUTION
    timeout_s: float | None = None
    source: ToolSource | None = None
    server_id: str = "custom"
    # The sandbox: network access (off by default), and where the program may write (None: the
    # project folder; paths relative to it or absolute; () writes nowhere).
    network: bool = False
    write_folders: tuple[str, ...] | None = None
    spec: ToolSpec = field(init=False)

    def __post_init__(self) -> None:
        self.spec = ToolSpec(
            name=self.name,
            description=self.description,
            input_schema={
                "type": "object",
                "properties": {n: p.schema() for n, p in self.params.items()},
                "required": [n for n, p in self.params.items() if p.required],
                "additionalProperties": False,
            },
            category=self.category,
            risk=self.risk,
            server_id=self.server_id,
            subjects_fn=self._subjects,
            subject_kind="text",
            annotations={"command": self.command, "program": self.program,
                         "source": str(self.source) if self.source else "",
                         "network": "on" if self.network else "off",
                         "write_folders": ("(the project folder)" if self.write_folders is None
                                           else ", ".join(self.write_folders) or "(none)")},
            runs_programs=True,
            sandboxed=True,
            needs_network=self.network,
            changes_files=self.write_folders != (),
        )

    @property
    def program(self) -> str:
        return self.words[0].parts[0]  # type: ignore[return-value]  # literal by construction

    # -- rendering -------------------------------------------------------------------------

    def render(self, values: Mapping[str, Any]) -> list[str]:
        argv, problems = self._render(values)
        if problems:
            raise RenderError(problems[0])
        return argv

    def _render(self, values: object) -> tuple[list[str], list[str]]:
        """(argv, problems): words with a problem are left out, so argv is always usable as a
        partial subject."""
        problems: list[str] = []
        if not isinstance(values, Mapping):
            return [self.program], ["input must be a JSON object"]
        extra = sorted(set(values) - set(self.params))
        if extra:
            problems.append(f"unknown parameter(s): {', '.join(map(str, extra))}; this tool "
                            f"takes {', '.join(self.params) or 'no parameters'}.")
        resolved: dict[str, Any] = {}
        for name, param in self.params.items():
            value = values.get(name, param.default)
            if value is None:
                if param.required:
                    problems.append(f"missing required parameter '{name}'.")
                resolved[name] = None
                continue
            try:
                resolved[name] = param.coerce(value)
            except RenderError as exc:
                problems.append(str(exc))
                resolved[name] = None
        argv: list[str] = []
        for word in self.words:
            lone = word.lone
            if lone is not None and self.params[lone].flag is not None:
                param, value = self.params[lone], resolved[lone]
                if value is None or (param.type == "boolean" and value is False):
                    continue
                if param.type == "boolean":
                    argv.append(param.flag)  # type: ignore[arg-type]
                    continue
                text = param.text(value)
                if text.startswith("-") and not param.dash_ok(word):
                    problems.append(self._dash_problem(param, text))
                    continue
                argv += [param.flag, text]  # type: ignore[list-item]
                continue
            if any(resolved[n] is None for n in word.placeholders):
                continue  # an absent optional parameter drops its whole word
            pieces = [p if isinstance(p, str) else self.params[p.name].text(resolved[p.name])
                      for p in word.parts]
            text = "".join(pieces)
            first = word.parts[0]
            if isinstance(first, Placeholder) and text.startswith("-") and \
                    not self.params[first.name].dash_ok(word):
                problems.append(self._dash_problem(self.params[first.name], text))
                continue
            argv.append(text)
        return argv, problems

    def _dash_problem(self, param: Param, text: str) -> str:
        return (f"parameter '{param.name}' would pass {text[:40]!r} as an argument starting "
                f"with '-', which {self.program} would read as an option. Give a value that "
                "does not start with '-'.")

    def _subjects(self, values: Mapping[str, Any], project_root: Path | None) -> list[str]:
        argv, problems = self._render(values)
        if problems:
            raise SubjectError("; ".join(problems), partial=[" ".join(argv)])
        return [" ".join(argv)]

    # -- running ---------------------------------------------------------------------------

    def program_problem(self, cwd: Path | None = None) -> str | None:
        """Why the program cannot run (not installed), or None."""
        env = minimal_env(project_root=cwd)
        if _resolve_program(self.program, env, cwd) is not None:
            return None
        where = f" (defined in {self.source})" if self.source else ""
        return (f"Custom tool '{self.name}' is unavailable: its program {self.program!r} was not "
                f"found{' on PATH' if '/' not in self.program else ''}{where}. Install it, or "
                "fix the tool's command.")

    def folders_outside(self, project_root: Path) -> list[str]:
        """The write folders that are not inside ``project_root`` (a project's tool may not have
        any)."""
        if self.write_folders is None:
            return []
        base = project_root.resolve()
        outside = []
        for entry in self.write_folders:
            path = Path(entry).expanduser()
            try:
                resolved = (path if path.is_absolute() else base / path).resolve()
            except (OSError, RuntimeError):
                outside.append(entry)
                continue
            if not resolved.is_relative_to(base):
                outside.append(entry)
        return outside

    def writable(self, ctx: ToolContext) -> tuple[Path, ...] | str:
        """The folders the program may write (existing ones only), or why it must not run."""
        if self.write_folders is None:
            return (ctx.project_root,)
        if self.server_id == PROJECT_SERVER_ID:
            outside = self.folders_outside(ctx.project_root)
            if outside:
                return (f"{self.name} was not run: it comes from the project's tools.toml, "
                        f"which cannot make folders outside the project writable "
                        f"({', '.join(outside)}).")
        return resolve_write_folders(ctx, {WRITE_FOLDERS_FIELD.key: list(self.write_folders)})

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            argv = self.render(input)
        except RenderError as exc:
            return ToolResult.error(f"{self.name}: {exc}")
        project_root = ctx.project_root
        problem = self.program_problem(project_root)
        if problem is not None:
            return ToolResult.error(problem)
        writable = self.writable(ctx)
        if isinstance(writable, str):
            return ToolResult.error(writable)
        try:
            # Before anything starts (safe_git_env may run git): a required sandbox that is
            # missing means nothing runs.
            confinement = command_confinement(ctx, self.name, writable=writable,
                                              network=self.network)
        except SandboxRequired as exc:
            return ToolResult.error(f"{self.name} was not run. {exc}")
        try:
            env = await safe_git_env(project_root,
                                     base_env=minimal_env(project_root=project_root),
                                     run_hooks=False, allow_network=True)
        except GitSafetyError as exc:
            return ToolResult.error(f"{self.name} was not run: {exc}")
        timeout = self.timeout_s or ctx.shell_timeout_s
        step = ChainStep(None, Pipeline([SimpleCommand(list(argv), " ".join(argv))]))
        result = await run_steps([step], cwd=project_root, root=project_root, timeout_s=timeout,
                                 max_output_bytes=ctx.max_output_bytes, env=env,
                                 confinement=confinement)
        payload: dict[str, Any] = {
            "command": argv,
            "exit_code": result.exit_code,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "duration_ms": result.duration_ms,
            "success": result.success,
            "sandboxed": result.sandboxed,
        }
        if result.timed_out:
            payload["timed_out"] = True
            return ToolResult.error(json.dumps(payload, ensure_ascii=False, indent=2))
        return ToolResult.ok(payload)


def _resolve_program(name: str, env: Mapping[str, str], cwd: Path | None) -> str | None:
    """The same lookup process_runner does: paths relative to cwd, bare names on PATH."""
    if "/" in name:
        path = Path(name) if os.path.isabs(name) else (cwd or Path.cwd()) / name
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(name, path=env.get("PATH"))
