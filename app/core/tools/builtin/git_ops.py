"""git_ops: a fixed set of git actions, hardened for repositories the person does not trust.

Why hardened: a repository's own configuration can name programs git runs during ordinary read
commands (fsmonitor, diff/filter drivers, pagers, hooks, signing programs); cloning a repository
must not mean running its code. Every invocation therefore runs in the environment built by
``app.core.tools.git_safety.safe_git_env`` (no system or person's global config, every
program-running key the repository defines overridden, hooks off unless the tool is configured
with ``run_hooks``, no network), runs inside the OS sandbox (``command_sandbox``: read actions
write nowhere, write actions write the project but never ``.git/config`` or ``.git/hooks``), and
additionally

- passes ``--no-ext-diff --no-textconv`` to diff-producing commands, so diffs are git's own,
- puts ``--end-of-options`` / ``--`` before anything user-supplied, validates refs, branch names
  (``git check-ref-format``), paths (inside the project) and integers.

There is no push action, by design (seed §9.2).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from app.core.checkpoints.coverage import RECORDS_GIT_STATE
from app.core.sandbox import Confinement, SandboxRequired
from app.core.sensitive_paths import is_secret_name
from app.core.tools.base import (
    DefaultRule,
    GitPermission,
    RiskLevel,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
    parse_input,
)
from app.core.tools.command_sandbox import command_confinement
from app.core.tools.config_fields import ConfigField, FieldKind
from app.core.tools.git_safety import GIT_ENV, GitSafetyError, safe_git_env
from app.core.tools.params.declaration import Params, param
from app.core.tools.process_runner import RunResult, minimal_env, run_argv

__all__ = ["GIT_ENV", "READ_ACTIONS", "WRITE_ACTIONS", "GitOpsTool", "create"]

READ_ACTIONS = ("status", "diff", "log", "show", "branch_list")
WRITE_ACTIONS = ("add", "commit", "branch_create", "checkout")

_REF_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/@{}~^+-]*$")
_MAX_REF_LEN = 250
_MAX_LOG = 1000


# Neither level had additionalProperties: false, so extra properties are still dropped, not
# refused. Values are checked further by the actions (refs, branch names, paths in the project).
class GitArgs(Params, allow_extra=True):
    files: list[str] | None = param(default=None,
                                    description="Paths for add (required), diff, log")
    message: str | None = param(default=None, description="Commit message for commit")
    branch_name: str | None = param(default=None,
                                    description="Branch for branch_create/checkout")
    max_count: int = param(default=10, minimum=1, maximum=_MAX_LOG,
                           description="Max entries for log (default 10)")
    ref: str | None = param(default=None,
                            description="Commit/branch/tag for show, diff, log, or the start "
                                        "point of branch_create")
    staged: bool = param(default=False, description="diff: show staged changes")


class GitOpsParams(Params, allow_extra=True):
    # READ_ACTIONS then WRITE_ACTIONS, as the enum has always listed them (a test checks).
    action: Literal["status", "diff", "log", "show", "branch_list",
                    "add", "commit", "branch_create", "checkout"] = param(
        description="The git operation to perform")
    args: GitArgs | None = param(default=None, description="Action-specific arguments")


class GitOpsTool:
    """The git_ops tool (see module docstring)."""

    def __init__(self) -> None:
        self.spec = ToolSpec(
            name="git_ops",
            description=(
                "Run git operations in the project repository. Read actions (low risk): status, "
                "diff (args.ref to compare against, args.staged, args.files), log "
                "(args.max_count default 10, args.ref, args.files), show (args.ref, default "
                "HEAD), branch_list. Write actions (need git write permission): add "
                "(args.files), commit (args.message), branch_create (args.branch_name, optional "
                "args.ref start point; switches to it), checkout (args.branch_name). There is no "
                "push. Paths are literal (no globs) and relative to the project."
            ),
            input_schema=GitOpsParams.json_schema(),
            params=GitOpsParams,
            category=ToolCategory.VERSION_CONTROL,
            risk=RiskLevel.HIGH,
            prompt_conventions=("Use git_ops for git rather than running git through shell_exec.",),
            prompt_order=80,
            subjects_fn=_subjects,
            subject_kind="text",
            # The checkpoints around a call record the project repository's HEAD, refs and
            # index (app.core.checkpoints.repo_state), so undo takes an add, commit, branch
            # or checkout back: the write actions are undoable.
            annotations={"read_only_actions": list(READ_ACTIONS),
                         RECORDS_GIT_STATE: True},
            undoable=True,
            default_enabled=True,
            default_config={"git_permission": "read_only"},
            config_fields=(
                ConfigField("git_permission", "Git permission", FieldKind.CHOICE,
                            default="read_only", choices=(
                                ("disabled", "Disabled"),
                                ("read_only", "Read only (status, diff, log, show, branches)"),
                                ("read_write", "Read and write (also add, commit, branch, "
                                               "checkout)"))),
                ConfigField("run_hooks", "Hooks", FieldKind.FLAG, default=False,
                            help="Run the repository's git hooks (off: hooks never run)"),
            ),
            # Each read action is allowed on its own rule: a person can remove one (say, show).
            default_rules=tuple(DefaultRule("allow", action, f"git {action} only reads")
                                for action in READ_ACTIONS),
            runs_programs=True,
            sandboxed=True,
            changes_files=_changes_files,
            read_only=_reads_only,
            named_paths=named_files,
        )

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        p = parse_input(GitOpsParams, "git_ops", input)
        if isinstance(p, ToolResult):
            return p
        action = p.action
        args = p.args if p.args is not None else GitArgs()
        if ctx.git_permission == GitPermission.DISABLED:
            return ToolResult.error("Git operations are disabled in this tool's configuration.")
        if action in WRITE_ACTIONS and ctx.git_permission != GitPermission.READ_WRITE:
            return ToolResult.error(
                f"Git write action '{action}' needs read-write git permission (current: "
                f"{ctx.git_permission.value}). Use a read action, or ask the person to enable "
                "git writes in the tool configuration.")
        try:
            runner = _GitRunner(ctx, read_only=action in READ_ACTIONS)
        except SandboxRequired as exc:
            return ToolResult.error(f"git {action} was not run. {exc}")
        try:
            argv = await _ACTIONS[action](runner, args)
            result = await runner.run(argv)
        except _InvalidInput as exc:
            return ToolResult.error(str(exc))
        except GitSafetyError as exc:
            return ToolResult.error(f"git {action} was not run: {exc}")
        if result.timed_out:
            return ToolResult.error(f"git {action} timed out after {runner.timeout:g} s.")
        if result.exit_code != 0:
            detail = (result.stderr.strip() or result.stdout.strip())
            return ToolResult.error(f"git {action} failed (exit code {result.exit_code}):\n"
                                    f"{detail}")
        output = result.stdout.rstrip("\n")
        left_out: list[str] = []
        if action in ("diff", "show"):
            named = {os.path.normpath(f) for f in args.files or ()}
            output, left_out = _without_secrets(output, named)
        if not output and action == "status":
            output = "(clean: nothing to commit)"
        payload: dict[str, Any] = {"action": action, "output": output, "success": True}
        if result.stderr.strip():
            payload["stderr"] = result.stderr.strip()
        if left_out:
            payload["left_out"] = (
                f"The changes of {', '.join(left_out[:5])} are not shown: files that hold "
                "secrets by their name. To see one, name it in args.files (the user is asked "
                "first).")
        return ToolResult.ok(payload)


_DIFF_HEADER = re.compile(r'^diff --git (?:"a/((?:[^"\\]|\\.)*)"|a/(\S+)) ', re.MULTILINE)


def _without_secrets(patch: str, named: set[str]) -> tuple[str, list[str]]:
    """``patch`` with the content of every secret-named file's section (deleted ones too)
    replaced by a note, unless the call named that file; and the files left out. What a
    commit once held is read from the repository's objects, which no sandbox hides."""
    headers = list(_DIFF_HEADER.finditer(patch))
    if not headers:
        return patch, []
    out = [patch[:headers[0].start()]]
    left_out: list[str] = []
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(patch)
        path = header.group(1) if header.group(1) is not None else header.group(2)
        section = patch[header.start():end]
        if is_secret_name(path.rsplit("/", 1)[-1]) and os.path.normpath(path) not in named:
            left_out.append(path)
            first_line = section.split("\n", 1)[0]
            section = f"{first_line}\n[content left out: {path} holds secrets by its name]\n"
        out.append(section)
    return "".join(out), left_out


def named_files(tool_input: Mapping[str, Any], project: Path | None = None) -> list[str]:
    """The files a read names in ``args.files``, resolved in the project: a secret named
    there is read, so the sensitive-path guard shows the call first."""
    args = tool_input.get("args")
    files = args.get("files") if isinstance(args, Mapping) else None
    if not isinstance(files, list) or project is None:
        return []
    return [os.path.normpath(os.path.join(project, f)) for f in files if isinstance(f, str)]


def _subjects(tool_input: Mapping[str, Any], project_root: Path | None = None) -> list[str]:
    return [str(tool_input.get("action", ""))]


def _changes_files(tool_input: Mapping[str, Any]) -> bool:
    return tool_input.get("action") not in READ_ACTIONS


def _reads_only(tool_input: Mapping[str, Any]) -> bool:
    return tool_input.get("action") in READ_ACTIONS


class _InvalidInput(ValueError):
    pass


class _GitRunner:
    def __init__(self, ctx: ToolContext, *, read_only: bool) -> None:
        self.ctx = ctx
        self.project_root = ctx.project_root
        self.read_only = read_only
        self.config = ctx.config_for("git_ops")
        self.timeout = float(self.config.get("timeout_s", ctx.shell_timeout_s))
        self._env: dict[str, str] | None = None
        # In the sandbox: a read action can write nowhere; a write action can write the
        # project and its .git, except .git's config and hooks. Never any network.
        self.confinement: Confinement | None = command_confinement(
            ctx, "git_ops", writable=() if read_only else (ctx.project_root,), network=False)

    async def env(self) -> dict[str, str]:
        if self._env is None:
            env = await safe_git_env(
                self.project_root, base_env=minimal_env(project_root=self.project_root),
                run_hooks=bool(self.config.get("run_hooks", False)), allow_network=False)
            if self.read_only:
                env["GIT_OPTIONAL_LOCKS"] = "0"  # a read must not rewrite the index
            self._env = env
        return self._env

    async def run(self, argv: list[str], *, cap: int | None = None) -> RunResult:
        return await run_argv(["git", "--literal-pathspecs", *argv],
                              cwd=self.project_root, timeout_s=self.timeout,
                              max_output_bytes=cap or self.ctx.max_output_bytes,
                              env=await self.env(), confinement=self.confinement)

    # validation ----------------------------------------------------------------------------

    async def ref(self, value: Any, what: str = "ref", *, allow_range: bool = False) -> str:
        if not isinstance(value, str) or not value:
            raise _InvalidInput(f"{what} must be a non-empty string")
        plain = value.replace("...", "..") if allow_range else value
        if len(value) > _MAX_REF_LEN or not _REF_RE.match(value) or (
                not allow_range and ".." in plain) or plain.count("..") > 1:
            raise _InvalidInput(
                f"Invalid {what} {value!r}: use a commit hash, branch, tag or an expression like "
                "HEAD~2 (letters, digits and ._/@{}~^+- only; it may not start with '-')"
                + (", or a range A..B." if allow_range else "."))
        return value

    async def revision_exists(self, value: str) -> bool:
        res = await self.run(["rev-parse", "--verify", "--quiet", "--end-of-options",
                              f"{value}^{{commit}}"], cap=4096)
        return res.exit_code == 0

    async def branch_name(self, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise _InvalidInput("args.branch_name is required")
        if value.startswith("-") or len(value) > _MAX_REF_LEN or any(
                ord(c) < 0x20 or c == "\x7f" for c in value):
            raise _InvalidInput(f"Invalid branch name {value!r}: it may not start with '-'.")
        res = await self.run(["check-ref-format", "--branch", value], cap=4096)
        if res.exit_code != 0 or res.stdout.strip() != value:
            raise _InvalidInput(f"Invalid branch name {value!r} (git check-ref-format "
                                "refused it). Use names like feature/login-form.")
        return value

    def paths(self, value: Any, *, required: bool) -> list[str]:
        if value is None or value == []:
            if required:
                raise _InvalidInput("args.files is required: list the paths to add")
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise _InvalidInput("args.files must be a list of non-empty path strings")
        out = []
        root = str(self.project_root)
        for raw in value:
            if "\0" in raw:
                raise _InvalidInput(f"Invalid path {raw!r}")
            # Lexical check: git itself resolves paths inside the work tree; a symlink is added
            # as a link, so it must not be followed here.
            full = os.path.normpath(os.path.join(root, raw))
            if full != root and not full.startswith(root + os.sep):
                raise _InvalidInput(f"Path {raw!r} is outside the project folder {root}.")
            out.append(os.path.relpath(full, root))
        return out


_DIFF_SAFETY = ["--no-ext-diff", "--no-textconv", "--no-color"]


async def _status(r: _GitRunner, args: GitArgs) -> list[str]:
    return ["status", "--short", "--branch", "--untracked-files=normal"]


async def _diff(r: _GitRunner, args: GitArgs) -> list[str]:
    argv = ["diff", *_DIFF_SAFETY]
    if args.staged:
        argv.append("--cached")
    argv.append("--end-of-options")
    if args.ref is not None:
        argv.append(await r.ref(args.ref))
    paths = r.paths(args.files, required=False)
    if not paths and not args.staged:
        # The sandbox hides secret-named files of the work tree (git cannot hash what it sees
        # there): compare the changed files but those, by name.
        listed = await r.run([argv[0], "--name-only", "-z", *argv[1:], "--"])
        changed = [p for p in listed.stdout.split("\0") if p]
        paths = [p for p in changed if not is_secret_name(p.rsplit("/", 1)[-1])]
        if changed and not paths:  # nothing else changed: an empty diff, not every file
            return [argv[0], "--diff-filter=X", *argv[1:], "--"]
    return [*argv, "--", *paths]


async def _log(r: _GitRunner, args: GitArgs) -> list[str]:
    argv = ["log", *_DIFF_SAFETY, f"--max-count={args.max_count}",
            "--oneline", "--decorate", "--end-of-options"]
    if args.ref is not None:
        argv.append(await r.ref(args.ref, allow_range=True))
    return [*argv, "--", *r.paths(args.files, required=False)]


async def _show(r: _GitRunner, args: GitArgs) -> list[str]:
    ref = await r.ref(args.ref if args.ref is not None else "HEAD")
    return ["show", *_DIFF_SAFETY, "--stat", "--patch", "--end-of-options", ref, "--"]


async def _branch_list(r: _GitRunner, args: GitArgs) -> list[str]:
    return ["branch", "--all", "--verbose", "--no-color"]


async def _add(r: _GitRunner, args: GitArgs) -> list[str]:
    return ["add", "--", *r.paths(args.files, required=True)]


async def _commit(r: _GitRunner, args: GitArgs) -> list[str]:
    message = args.message
    if message is None or not message.strip():
        raise _InvalidInput("args.message is required: the commit message")
    if "\0" in message:
        raise _InvalidInput("the commit message may not contain NUL characters")
    argv = ["commit", "--no-gpg-sign", "--no-edit", f"--message={message}"]
    if not r.config.get("run_hooks", False):
        argv.append("--no-verify")
    return argv


async def _branch_create(r: _GitRunner, args: GitArgs) -> list[str]:
    name = await r.branch_name(args.branch_name)
    argv = ["switch", "--no-guess", "-c", name]
    if args.ref is not None:
        start = await r.ref(args.ref, "start point")
        if not await r.revision_exists(start):
            raise _InvalidInput(f"Start point {start!r} is not a commit in this repository.")
        argv += ["--end-of-options", start]
    return argv


async def _checkout(r: _GitRunner, args: GitArgs) -> list[str]:
    name = await r.branch_name(args.branch_name)
    return ["switch", "--end-of-options", name]


_ACTIONS = {
    "status": _status,
    "diff": _diff,
    "log": _log,
    "show": _show,
    "branch_list": _branch_list,
    "add": _add,
    "commit": _commit,
    "branch_create": _branch_create,
    "checkout": _checkout,
}


def create() -> GitOpsTool:
    return GitOpsTool()
