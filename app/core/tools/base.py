"""The tool contract: specs, results, the capability context and the Tool protocol.

A tool's *capabilities* (what it can do at all) live in ``ToolContext`` and are enforced inside
the tool. Whether a call within those capabilities runs, asks or is refused is decided elsewhere
(``app.core.permissions``), using the *subjects* each spec derives from a call's input.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

from app.core.sandbox import Confinement, Sandbox, machine_sandbox
from app.core.tools.capability_lift import LiftProposer
from app.core.tools.config_fields import ConfigField
from app.core.tools.images import ImagePart
from app.core.tools.params.problems import ParamsError

if TYPE_CHECKING:
    from app.core.tools.params.declaration import Params

_P = TypeVar("_P", bound="Params")


class ToolCategory(StrEnum):
    """UI grouping only; never used for access control (see ToolContext for that)."""

    READ_ONLY = "read_only"
    FILE_SYSTEM = "file_system"
    EXECUTION = "execution"
    VERSION_CONTROL = "version_control"
    COMPOSITE = "composite"
    # The sub-agent tools: offered by the profile's "Orchestration" choice, not the tools list.
    ORCHESTRATION = "orchestration"

    @property
    def label(self) -> str:
        """The heading of the built-in tools of this category in the tools panel."""
        return _CATEGORY_TEXTS[self][0]

    @property
    def risk_warning(self) -> str:
        """What the approval dialog warns of before a high-risk tool of this category runs."""
        return _CATEGORY_TEXTS[self][1]


# (label, risk warning) of each category.
_CATEGORY_TEXTS = {
    ToolCategory.READ_ONLY: ("Read only", "This tool can make changes."),
    ToolCategory.FILE_SYSTEM: ("Files", "This tool changes files on your computer."),
    ToolCategory.EXECUTION: ("Execution", "This tool runs programs on your computer."),
    ToolCategory.VERSION_CONTROL: ("Version control",
                                   "This tool can change your git repository."),
    ToolCategory.COMPOSITE: ("Composite", "This tool runs several commands on your computer."),
    ToolCategory.ORCHESTRATION: ("Orchestration",
                                 "This tool starts a sub-agent; each of its calls asks or "
                                 "runs like yours."),
}


class RiskLevel(StrEnum):
    LOW = "low"
    HIGH = "high"


class GitPermission(StrEnum):
    DISABLED = "disabled"
    READ_ONLY = "read_only"
    READ_WRITE = "read_write"


# How rule input patterns are matched against a tool's subjects:
#   "text": `*` matches any run of characters (shell commands, JSON, actions)
#   "path": glob where `*` stays inside one folder and `**` crosses folders
#   "host": like text; hosts are lower-cased by the tool before matching
SubjectKind = Literal["text", "path", "host"]


class SubjectError(ValueError):
    """Raised by a subjects function when the input cannot be fully understood.

    ``partial`` holds what could be extracted; the permission service still applies deny rules
    to it but never auto-approves such a call.
    """

    def __init__(self, message: str, partial: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.partial = list(partial)


def canonical_json(value: Any) -> str:
    """Stable JSON text of a tool input: sorted keys, no insignificant whitespace."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


SubjectsFn = Callable[[Mapping[str, Any], "Path | None"], list[str]]

DecisionName = Literal["allow", "ask", "deny"]

# A call's progress: (progress, total or None when unknown, message or None).
ProgressFn = Callable[[float, float | None, str | None], None]

# In a rule's input pattern, the open project folder (``{project}/**``: anything inside it), so
# rules are portable between projects.
PROJECT_PLACEHOLDER = "{project}"


@dataclass(frozen=True)
class DefaultRule:
    """A permission rule a tool ships with, added once to every database that lacks it.

    Added at start for tools a database has never seen; never re-added after the person
    deletes it, never changing a rule the person created or edited.
    """

    decision: DecisionName
    input_pattern: str | None = None
    description: str = ""
    priority: int = 0


def reads_in_project(tool_name: str) -> tuple[DefaultRule, ...]:
    """The default rule of a reading tool: allowed inside the open project; elsewhere (and for
    sensitive files anywhere) it asks."""
    return (DefaultRule("allow", f"{PROJECT_PLACEHOLDER}/**",
                        f"{tool_name} reads inside the open project"),)


@dataclass(frozen=True)
class ToolSpec:
    """What the model and the permission system know about a tool.

    ``subjects_fn(input, project_root)`` returns the strings that rule input patterns are matched
    against ; without one, the subject is the canonical JSON of the input.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    category: ToolCategory
    risk: RiskLevel
    server_id: str = "builtin"
    subjects_fn: SubjectsFn | None = field(default=None, compare=False, repr=False)
    subject_kind: SubjectKind = "text"
    # Shown in the UI; MCP annotations such as readOnlyHint are the server's claims, which the
    # permission facts weigh (app.core.permissions.server_claims).
    annotations: Mapping[str, Any] = field(default_factory=dict, compare=False)
    # Everything else the app needs to know about the tool, declared here so that a tool is
    # one module: offered to new profiles, its default config and Configure… fields, the rules
    # it ships with, and what it can reach.
    # The tool's typed parameter model (app.core.tools.params.declaration.Params): the source of
    # ``input_schema`` and the one validation of a call's input. None for tools whose schema
    # comes from elsewhere (MCP servers, custom TOML tools): those are checked by jsonschema.
    params: type[Params] | None = field(default=None, compare=False, repr=False)
    default_enabled: bool = field(default=False, compare=False)
    default_config: Mapping[str, Any] = field(default_factory=dict, compare=False)
    config_fields: tuple[ConfigField, ...] = field(default=(), compare=False, repr=False)
    default_rules: tuple[DefaultRule, ...] = field(default=(), compare=False, repr=False)
    runs_programs: bool = field(default=False, compare=False)
    # Every program it starts runs in the OS sandbox whenever one works (app.core.sandbox);
    # False for a tool that starts programs outside it (e.g. an MCP server not opted in).
    sandboxed: bool = field(default=False, compare=False)
    needs_network: bool = field(default=False, compare=False)
    # For a tool of a server Tebiki runs in the OS sandbox itself (an MCP stdio server): the
    # folders that sandbox lets the server write, () for none. None: no such server, so what
    # it may write is unknown (app.core.permissions.server_claims).
    sandbox_write_folders: tuple[str, ...] | None = field(default=None, compare=False)
    # Whether a call can change files in the project, so a checkpoint is taken around it and
    # its changes are shown and undoable: a bool, or a function of the input for tools where
    # it depends on the action (git_ops' read actions change nothing).
    changes_files: bool | Callable[[Mapping[str, Any]], bool] = field(default=False,
                                                                      compare=False)
    # Whether a call changes nothing at all (no file, no process, no repository): reading
    # tools, web reading, git's read actions. Plan mode runs only these; a bool, or a function
    # of the input. Never taken from a server's say-so (an MCP server's readOnlyHint counts
    # only beside facts Tebiki proves: app.core.permissions.server_claims).
    read_only: bool | Callable[[Mapping[str, Any]], bool] = field(default=False, compare=False)
    # Whether everything a call does is a change to files in its write folders, so the
    # checkpoints around it cover it and "Undo" takes it back: the file tools and sandboxed
    # commands (whose .git stays read-only). False where effects reach elsewhere: git_ops'
    # write actions move refs, an MCP server keeps its own state.
    undoable: bool = field(default=False, compare=False)
    # Paths a call names in free text (a command line's arguments), resolved: the permission
    # modes count one outside the project as reaching outside it (not contained). None: the
    # subjects already say everything the call touches.
    named_paths: Callable[[Mapping[str, Any], Path | None], list[str]] | None = field(
        default=None, compare=False, repr=False)
    # Why a call cannot run under the tool's configured capabilities (a write outside its
    # write folders, a program not on its list), checked before anyone is asked: approving
    # such a call could not make it run. None: it can run (the tool still checks everything).
    capability_refusal: Callable[[Mapping[str, Any], ToolContext], str | None] | None = field(
        default=None, compare=False, repr=False)
    # The configuration change that could let a refused call run (a folder added to its write
    # folders, a program to its list): the call then asks, and approving may lift the limit.
    capability_lift: LiftProposer | None = field(default=None, compare=False, repr=False)
    # When set, the approval dialog lists the call's subjects under this heading (e.g. each
    # command of a shell chain), because for this tool they are what a person must read.
    subjects_heading: str | None = field(default=None, compare=False)
    # What the system prompt tells the model about using the tool, one line each, when the
    # tool is offered (app.core.agent.system_prompt). ``prompt_order`` places them among the
    # offered tools' lines (lower first, then by name), so the prompt reads in the order of a
    # task (read, edit, find, run, git, web) and is the same bytes whatever order tools come in.
    prompt_conventions: tuple[str, ...] = field(default=(), compare=False)
    prompt_order: int = field(default=0, compare=False)

    def subjects(self, tool_input: Mapping[str, Any],
                 project_root: Path | None = None) -> list[str]:
        if self.subjects_fn is None:
            return [canonical_json(tool_input)]
        return self.subjects_fn(tool_input, project_root)

    def may_change_files(self, tool_input: Mapping[str, Any]) -> bool:
        if callable(self.changes_files):
            try:
                return bool(self.changes_files(tool_input))
            except Exception:  # an input it cannot read: assume it can, the safe side
                return True
        return self.changes_files

    def is_read_only(self, tool_input: Mapping[str, Any]) -> bool:
        if callable(self.read_only):
            try:
                return bool(self.read_only(tool_input))
            except Exception:  # an input it cannot read: assume it changes something
                return False
        return bool(self.read_only)

    def definition(self) -> dict[str, Any]:
        """The Anthropic Messages API tool definition.

        With ``params`` the schema comes from the params class, so what the model is told is
        exactly what ``ToolRegistry.validate`` accepts.
        """
        schema = self.params.json_schema() if self.params is not None else dict(self.input_schema)
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": schema,
        }


@dataclass(frozen=True)
class PersonView:
    """What a call's card shows when it is not what the model gets: an MCP server marks
    content as for the user only or for the assistant only (``annotations.audience``)."""

    text: str
    images: tuple[ImagePart, ...] = ()


@dataclass(frozen=True)
class ToolResult:
    """What a call returns. ``content`` is the text the model, the audit and the card get;
    ``images`` (already checked, app.core.tools.images) travel with it to providers that take
    images, and the text names each one (``ImagePart.note``) so nothing depends on them.
    ``for_person``, when set, is what the card shows instead (the model never sees it)."""

    content: str
    is_error: bool = False
    images: tuple[ImagePart, ...] = ()
    for_person: PersonView | None = None

    @classmethod
    def ok(cls, content: str | Mapping[str, Any] | list[Any],
           images: tuple[ImagePart, ...] = ()) -> ToolResult:
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False, indent=2)
        return cls(content, False, images)

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(message, True)


def parse_input(params_cls: type[_P], tool_name: str, input: object) -> _P | ToolResult:
    """``params_cls.parse(input)``, or the error ToolResult naming ``tool_name``.

    The common first step of ``execute``::

        p = parse_input(ReadFileParams, "read_file", input)
        if isinstance(p, ToolResult):
            return p
    """
    try:
        return params_cls.parse(input)
    except ParamsError as err:
        return ToolResult.error(err.message_for(tool_name))


# The default command allowlist is read-only programs only.
DEFAULT_ALLOWED_COMMANDS: tuple[str, ...] = ("ls", "cat", "head", "wc", "find", "grep", "tree")


def _as_path(value: str | os.PathLike[str]) -> Path:
    return Path(os.path.expanduser(os.fspath(value))).resolve()


@dataclass(frozen=True)
class ToolContext:
    """The capability boundary of one tool call, built from the tool configuration.

    Every field but ``project_root`` has a safe default: no write dirs, read-only commands,
    git read-only, private network off.
    """

    project_root: Path
    allowed_write_dirs: tuple[Path, ...] = ()
    allowed_commands: tuple[str, ...] = DEFAULT_ALLOWED_COMMANDS
    git_permission: GitPermission = GitPermission.READ_ONLY
    http_timeout_s: float = 30.0
    shell_timeout_s: float = 30.0
    allow_private_network: bool = False
    max_output_bytes: int = 50_000
    # Per-tool options that are not capabilities shared by several tools
    # (web_search provider and endpoints, self_eval checks, git hooks, ...), keyed by tool name.
    tool_config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Mutable state shared by the calls of one conversation (shell cwd, background jobs).
    session: dict[str, Any] = field(default_factory=dict, compare=False)
    # The OS sandbox every program this call starts runs in (app.core.sandbox). The app passes
    # its setting; a context built without one gets the machine's sandbox, required wherever it
    # works: containment does not depend on every caller remembering it.
    sandbox: Sandbox = field(default_factory=machine_sandbox, compare=False)
    # Where a long call reports how far it got (the call runner sets it per call and turns it
    # into throttled ToolProgress events); None: nobody listens. Safe from any thread.
    progress: ProgressFn | None = field(default=None, compare=False, repr=False)
    # Paths this call's programs may read but never write, whatever the write folders say:
    # for a call that runs unasked, everything its checkpoint does not record (so "reversible"
    # holds for every path it can touch). Set per call by the call runner.
    protected: tuple[Path, ...] = field(default=(), compare=False)
    # Sensitive paths the person approved this very call to see (the sandbox hides every other
    # one). Set per call by the call runner, only after an approval that showed them.
    revealed: tuple[Path, ...] = field(default=(), compare=False)
    # The model's id of this call (its ``tool_use`` id), set per call by the call runner: a
    # sub-agent paused for approval finds the result to fill in by it.
    call_id: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "project_root", _as_path(self.project_root))
        set_(self, "allowed_write_dirs", tuple(_resolve_write_dir(self.project_root, d)
                                               for d in self.allowed_write_dirs))
        set_(self, "allowed_commands", tuple(self.allowed_commands))
        set_(self, "git_permission", GitPermission(self.git_permission))
        if self.http_timeout_s <= 0 or self.shell_timeout_s <= 0:
            raise ValueError("timeouts must be positive")

    def config_for(self, tool_name: str) -> Mapping[str, Any]:
        return self.tool_config.get(tool_name, {})

    def confine(self, *, writable: Sequence[Path] = (), read_only: Sequence[Path] = (),
                network: bool = False) -> Confinement | None:
        """The sandbox for a program this call starts: ``writable`` folders, ``read_only`` ones
        (protected inside them), network on or off; the project folder is always visible.
        None when the sandbox is off and not required; raises ``SandboxRequired`` when it is
        required and unavailable (the message tells the person what to do)."""
        visible = [*read_only, *self.protected]
        if not any(self.project_root.is_relative_to(w) for w in writable):
            visible.insert(0, self.project_root)
        # The enclosing repository too: programs read its root's .gitignore and config even
        # when the project is a subfolder (this matters where the folder would otherwise be
        # out of sight, e.g. under the sandbox's private /tmp).
        repo = _repository_root(self.project_root)
        if repo is not None and repo != self.project_root:
            visible.insert(0, repo)
        return self.sandbox.confine(writable=writable, read_only=visible, network=network,
                                    revealed=self.revealed)


def _repository_root(folder: Path) -> Path | None:
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _resolve_write_dir(project_root: Path, d: str | os.PathLike[str]) -> Path:
    p = Path(os.path.expanduser(os.fspath(d)))
    if not p.is_absolute():
        p = project_root / p
    return p.resolve()


@runtime_checkable
class Tool(Protocol):
    spec: ToolSpec

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult: ...


@runtime_checkable
class PreviewableTool(Tool, Protocol):
    """A tool that can describe what it would change (a unified diff) without doing it."""

    async def preview(self, input: Mapping[str, Any], ctx: ToolContext) -> str: ...
