"""Custom tools from TOML: a CLI command becomes a first-class tool.

Files, read in this order (a tool in a later file replaces one of the same name):

1. ``tools.toml`` in the data dir (the person's own tools),
2. ``.tebiki/tools.toml`` in the project folder (the project's tools).

Why argv and not a shell: the seed shell-escapes values into a command line; here the template
is split into words once, at load time, with the same parser shell_exec uses (shell quoting, no
shell features), and parameters are substituted *inside* those words afterwards. A value can
therefore never add a word, an operator or a substitution: ``; rm -rf ~``, ``$(…)``, quotes and
newlines arrive as one literal argv item, and the program runs through ``process_runner``
(no shell, minimal environment, process-group kill on timeout, output capped).

Template rules: ``{name}`` is a placeholder (``{{``/``}}`` are literal braces); the first word,
the program, must be literal; a placeholder may be a whole word (``{path}``) or part of one
(``--title={title}``). An optional parameter that is absent drops every word it appears in, so
``--title={title}`` vanishes cleanly. ``flag = "--title"`` on a parameter whose placeholder is a
whole word emits ``--title <value>`` only when the value is given; for a boolean it emits the
flag when true and nothing when false (a boolean without a flag renders ``true``/``false``).

A value that would start a word with ``-`` is refused (it would be read as an option), unless the
word comes after a literal ``--`` in the template (``grep -e {pattern} -- {path}``), the
parameter says ``allow_leading_dash = true`` or the value is one of its ``enum`` values.

Security notes: ``.tebiki/tools.toml`` comes with the repository. Tools from the person's own
file have ``server_id = "custom"``, tools from a project's file ``server_id = "project"``, so
rules written for built-ins or for the person's own tools never approve a repository's tools,
and a custom tool that shadows a built-in name is decided by its own rules only (default: ask).
Only the person's own file (data dir) may shadow a built-in tool name: a project file that tries
gets a load error, so a cloned repository cannot change what ``grep_search`` runs.
Every tool runs in git_safety's environment for the project folder (no hooks, no pager, no
repository-configured helper programs), whatever its program: a git reached through a wrapper
(``timeout 20 git status``) or started by another program inherits it.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import shutil
import tomllib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from app.core.tools.base import (
    RiskLevel,
    SubjectError,
    Tool,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
)
from app.core.tools.builtin import builtin_tools
from app.core.tools.git_safety import GitSafetyError, safe_git_env
from app.core.tools.process_runner import minimal_env, run_steps
from app.core.tools.providers.base import ProviderPriority
from app.core.tools.shell_syntax import ChainStep, Pipeline, SimpleCommand, parse_command

__all__ = [
    "PROJECT_TOOLS_FILE",
    "TOOLS_FILE",
    "CustomTool",
    "CustomToolsProvider",
    "Param",
    "Placeholder",
    "TemplateError",
    "ToolDefinitionError",
    "Word",
    "load_tools_file",
    "parse_template",
]

TOOLS_FILE = "tools.toml"
PROJECT_TOOLS_FILE = Path(".tebiki") / "tools.toml"
MAX_FILE_BYTES = 1 << 20
MAX_TIMEOUT_S = 3600.0
TYPES = ("string", "integer", "number", "boolean")
TOOL_KEYS = ("description", "command", "risk_level", "risk", "category", "timeout",
             "parameters")
PARAM_KEYS = ("type", "description", "required", "enum", "default", "flag", "minimum",
              "maximum", "allow_leading_dash")
_TOOL_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what the Messages API accepts
_PARAM_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_PLACEHOLDER_RE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TOML_WHERE_RE = re.compile(r"^(?P<msg>.*?)\s*\(at line (?P<line>\d+), column (?P<col>\d+)\)$",
                            re.DOTALL)


class TemplateError(ValueError):
    """The command template cannot be used (message says how to fix it)."""


class ToolDefinitionError(ValueError):
    """One tool table is invalid; ``param`` names the parameter, for the line number."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class RenderError(ValueError):
    """The call's input cannot be turned into argv (message is for the model)."""


# -- the template ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Placeholder:
    name: str


@dataclass(frozen=True)
class Word:
    """One argv item of the template: literal text and placeholders, concatenated."""

    parts: tuple[str | Placeholder, ...]
    operand: bool = False  # after a literal "--": values may start with "-"

    @property
    def placeholders(self) -> list[str]:
        return [p.name for p in self.parts if isinstance(p, Placeholder)]

    @property
    def lone(self) -> str | None:
        """The parameter name when the word is exactly one placeholder."""
        if len(self.parts) == 1 and isinstance(self.parts[0], Placeholder):
            return self.parts[0].name
        return None


def parse_template(command: str) -> list[Word]:
    """Split a command template into words once, with shell_exec's parser.

    Placeholders are swapped for plain-character tokens before parsing, so braces never reach
    the parser and a placeholder can sit inside quotes or inside a word.
    """
    if not isinstance(command, str) or not command.strip():
        raise TemplateError("command is empty; give the program and its arguments, e.g. "
                            "command = \"gh issue view {number}\"")
    nonce = secrets.token_hex(4)
    while nonce in command:
        nonce = secrets.token_hex(4)
    marks: dict[str, str | Placeholder] = {}
    originals: dict[str, str] = {}

    def swap(m: re.Match[str]) -> str:
        token = f"tbk{nonce}x{len(marks)}x"
        text = m.group(0)
        marks[token] = Placeholder(m.group(1)) if m.group(1) else text[0]
        originals[token] = text
        return token

    text = _PLACEHOLDER_RE.sub(swap, command)
    token_re = re.compile(f"(tbk{nonce}x\\d+x)")

    def restore(s: str) -> str:
        return token_re.sub(lambda m: originals[m.group(1)], s)

    parsed = parse_command(text)
    if not parsed.ok:
        problems = "; ".join(restore(p) for p in parsed.problems) or "nothing to run"
        raise TemplateError(f"command cannot be used: {problems}. The template is split like a "
                            "shell command, but no shell runs it: quote literal * ? [ ~ $ "
                            "characters, and give one program with its arguments.")
    commands = parsed.commands
    if len(commands) != 1:
        raise TemplateError("command must be one program with its arguments; |, &&, || and ; "
                            "are not supported (no shell runs it). Wrap a pipeline in a script "
                            "and call the script.")
    words: list[Word] = []
    operand = False
    for raw in commands[0].words:
        parts: list[str | Placeholder] = []
        for piece in token_re.split(raw):
            if not piece:
                continue
            mark = marks.get(piece, piece) if token_re.fullmatch(piece) else piece
            if isinstance(mark, str) and parts and isinstance(parts[-1], str):
                parts[-1] += mark
            else:
                parts.append(mark)
        word = Word(tuple(parts), operand)
        if not words and word.placeholders:
            raise TemplateError("the program (the first word of command) must be literal, not "
                                "a placeholder: a parameter must never choose what runs.")
        if any(isinstance(p, str) and nonce in p for p in parts):
            raise TemplateError("a placeholder could not be read back after parsing; write "
                                "{name} plainly (and {{ or }} for literal braces)")
        words.append(word)
        if word.parts == ("--",):
            operand = True
    return words


# -- parameters ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Param:
    name: str
    type: str = "string"
    description: str = ""
    required: bool = False
    enum: tuple[Any, ...] | None = None
    default: Any = None
    flag: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    allow_leading_dash: bool = False

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.description:
            out["description"] = self.description
        if self.enum is not None:
            out["enum"] = list(self.enum)
        if self.default is not None:
            out["default"] = self.default
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out

    def coerce(self, value: Any) -> Any:
        """Validate a value and normalise it (1.0 → 1 for integers); RenderError if bad."""
        where = f"parameter '{self.name}'"
        if self.type == "boolean":
            if not isinstance(value, bool):
                raise RenderError(f"{where} must be true or false, got {value!r}.")
            return value
        if self.type == "string":
            if not isinstance(value, str):
                raise RenderError(f"{where} must be a string, got {type(value).__name__}.")
            if "\x00" in value:
                raise RenderError(f"{where} contains a NUL character, which no command "
                                  "argument can hold. Remove it.")
        elif self.type == "integer":
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                raise RenderError(f"{where} must be an integer, got {value!r}.")
        else:  # number
            if isinstance(value, bool) or not isinstance(value, int | float) or (
                    isinstance(value, float) and not math.isfinite(value)):
                raise RenderError(f"{where} must be a finite number, got {value!r}.")
        if self.type in ("integer", "number"):
            if self.minimum is not None and value < self.minimum:
                raise RenderError(f"{where} must be at least {self.minimum:g}, got {value}.")
            if self.maximum is not None and value > self.maximum:
                raise RenderError(f"{where} must be at most {self.maximum:g}, got {value}.")
        if self.enum is not None and value not in self.enum:
            raise RenderError(f"{where} must be one of {', '.join(map(repr, self.enum))}; got "
                              f"{value!r}.")
        return value

    def text(self, value: Any) -> str:
        if self.type == "boolean":
            return "true" if value else "false"
        if isinstance(value, float):
            return repr(value)  # shortest round-trip form: 0.1, 1e-07
        return str(value)

    def dash_ok(self, word: Word) -> bool:
        return word.operand or self.allow_leading_dash or self.enum is not None


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
                         "source": str(self.source) if self.source else ""},
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

    def _render(self, values: Mapping[str, Any]) -> tuple[list[str], list[str]]:
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

    def _subjects(self, values: Mapping[str, Any], working_dir: Path | None) -> list[str]:
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

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            argv = self.render(input)
        except RenderError as exc:
            return ToolResult.error(f"{self.name}: {exc}")
        cwd = ctx.working_dir
        problem = self.program_problem(cwd)
        if problem is not None:
            return ToolResult.error(problem)
        try:
            env = await safe_git_env(cwd, base_env=minimal_env(project_root=cwd),
                                     run_hooks=False, allow_network=True)
        except GitSafetyError as exc:
            return ToolResult.error(f"{self.name} was not run: {exc}")
        timeout = self.timeout_s or ctx.shell_timeout_s
        step = ChainStep(None, Pipeline([SimpleCommand(list(argv), " ".join(argv))]))
        result = await run_steps([step], cwd=cwd, root=cwd, timeout_s=timeout,
                                 max_output_bytes=ctx.max_output_bytes, env=env)
        payload: dict[str, Any] = {
            "command": argv,
            "exit_code": result.exit_code,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "duration_ms": result.duration_ms,
            "success": result.success,
        }
        if result.timed_out:
            payload["timed_out"] = True
            return ToolResult.error(json.dumps(payload, ensure_ascii=False, indent=2))
        return ToolResult.ok(payload)


@cache
def _builtin_names() -> frozenset[str]:
    return frozenset(tool.spec.name for tool in builtin_tools())


def _resolve_program(name: str, env: Mapping[str, str], cwd: Path | None) -> str | None:
    """The same lookup process_runner does: paths relative to cwd, bare names on PATH."""
    if "/" in name:
        path = Path(name) if os.path.isabs(name) else (cwd or Path.cwd()) / name
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(name, path=env.get("PATH"))


# -- building tools from TOML tables -----------------------------------------------------------

def _check_keys(table: Mapping[str, Any], allowed: Sequence[str], what: str,
                param: str | None = None) -> None:
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise ToolDefinitionError(f"{what}: unknown key(s) {', '.join(unknown)}; allowed: "
                                  f"{', '.join(allowed)}", param)


def _build_param(name: str, table: Any) -> Param:
    what = f"parameter '{name}'"
    if not _PARAM_NAME_RE.fullmatch(name):
        raise ToolDefinitionError(f"{what}: names use letters, digits and _ and do not start "
                                  "with a digit", name)
    if not isinstance(table, Mapping):
        raise ToolDefinitionError(f"{what} must be a table, e.g. [<tool>.parameters.{name}] "
                                  "with type = \"string\"", name)
    _check_keys(table, PARAM_KEYS, what, name)

    def get(key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
        value = table.get(key, default)
        if value is not None and (not isinstance(value, kind) or (
                isinstance(value, bool) and kind in (int, float, (int, float)))):
            raise ToolDefinitionError(f"{what}: {key} has the wrong type ({value!r})", name)
        return value

    ptype = get("type", str, "string")
    if ptype not in TYPES:
        raise ToolDefinitionError(f"{what}: unknown type {ptype!r}; use one of "
                                  f"{', '.join(TYPES)}", name)
    flag = get("flag", str)
    if flag is not None and (not flag or "\x00" in flag):
        raise ToolDefinitionError(f"{what}: flag must be a non-empty word such as \"--title\"",
                                  name)
    param = Param(
        name=name, type=ptype, description=get("description", str, ""),
        required=get("required", bool, False), flag=flag,
        minimum=get("minimum", (int, float)), maximum=get("maximum", (int, float)),
        allow_leading_dash=get("allow_leading_dash", bool, False),
    )
    if (param.minimum is not None or param.maximum is not None) and \
            ptype not in ("integer", "number"):
        raise ToolDefinitionError(f"{what}: minimum/maximum apply to integer and number only",
                                  name)
    enum = table.get("enum")
    if enum is not None:
        if ptype == "boolean" or not isinstance(enum, list) or not enum:
            raise ToolDefinitionError(f"{what}: enum must be a non-empty list of {ptype} "
                                      "values (not for booleans)", name)
        for item in enum:
            try:
                Param(name, ptype).coerce(item)
            except RenderError:
                raise ToolDefinitionError(f"{what}: enum value {item!r} is not a {ptype}",
                                          name) from None
        param = replace(param, enum=tuple(enum))
    default = table.get("default")
    if default is not None:
        try:
            param = replace(param, default=param.coerce(default))
        except RenderError as exc:
            raise ToolDefinitionError(f"{what}: default {default!r} is invalid: {exc}",
                                      name) from None
    return param


def build_tool(name: str, table: Any, source: ToolSource | None = None) -> CustomTool:
    """A CustomTool from one TOML table; ToolDefinitionError says what is wrong."""
    if not _TOOL_NAME_RE.fullmatch(name):
        raise ToolDefinitionError("tool names use 1-64 letters, digits, _ or - (what the model "
                                  "API accepts)")
    if not isinstance(table, Mapping):
        raise ToolDefinitionError("must be a table with description and command")
    _check_keys(table, TOOL_KEYS, "tool")
    description = table.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ToolDefinitionError("description is missing: say what the tool does, for the "
                                  "model and in the approval dialog")
    command = table.get("command")
    if not isinstance(command, str):
        raise ToolDefinitionError("command is missing: a string such as "
                                  "\"gh issue view {number}\"")
    try:
        words = parse_template(command)
    except TemplateError as exc:
        raise ToolDefinitionError(str(exc)) from None
    if "risk" in table and "risk_level" in table:
        raise ToolDefinitionError("give risk_level or risk, not both")
    risk_text = table.get("risk_level", table.get("risk", "high"))
    try:
        risk = RiskLevel(risk_text)
    except ValueError:
        raise ToolDefinitionError(f"risk_level {risk_text!r} is unknown; use \"low\" or "
                                  "\"high\" (default high)") from None
    category_text = table.get("category", ToolCategory.EXECUTION.value)
    try:
        category = ToolCategory(category_text)
    except ValueError:
        raise ToolDefinitionError(f"category {category_text!r} is unknown; use one of "
                                  f"{', '.join(c.value for c in ToolCategory)}") from None
    timeout = table.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                or not 0 < timeout <= MAX_TIMEOUT_S):
        raise ToolDefinitionError(f"timeout must be a number of seconds above 0 and at most "
                                  f"{MAX_TIMEOUT_S:g}, got {timeout!r}")
    raw_params = table.get("parameters", {})
    if not isinstance(raw_params, Mapping):
        raise ToolDefinitionError("parameters must be a table of tables, e.g. "
                                  f"[{name}.parameters.path]")
    params = {pname: _build_param(pname, ptable) for pname, ptable in raw_params.items()}
    used: set[str] = set()
    for word in words:
        for pname in word.placeholders:
            if pname not in params:
                raise ToolDefinitionError(f"command uses {{{pname}}} but no parameter "
                                          f"'{pname}' is declared; declare it, or write "
                                          f"{{{{{pname}}}}} for literal braces")
            used.add(pname)
            if params[pname].flag is not None and word.lone != pname:
                raise ToolDefinitionError(f"parameter '{pname}' has a flag, so its "
                                          f"placeholder must be a word of its own, e.g. "
                                          f"\"… {{{pname}}} …\"", pname)
    for pname in params:
        if pname not in used:
            raise ToolDefinitionError(f"parameter '{pname}' is declared but command has no "
                                      f"{{{pname}}}", pname)
    return CustomTool(name=name, description=description.strip(), command=command,
                      words=words, params=params, risk=risk, category=category,
                      timeout_s=float(timeout) if timeout is not None else None, source=source)


# -- reading files ----------------------------------------------------------------------------

def _header_line(lines: Sequence[str], path: Sequence[str]) -> int | None:
    """The line of the ``[a.b.c]`` header for a dotted key path (quotes, spaces ignored)."""
    want = ".".join(path)
    for i, line in enumerate(lines, 1):
        s = line.strip()
        if s.startswith("[") and not s.startswith("[["):
            key = s[1:].split("]", 1)[0]
            if key.replace('"', "").replace("'", "").replace(" ", "") == want:
                return i
    return None


def _first_mention(lines: Sequence[str], name: str) -> int | None:
    rx = re.compile(rf"(^|[\s.\[\"']){re.escape(name)}([\s.\]\"'=]|$)")
    return next((i for i, line in enumerate(lines, 1) if rx.search(line)), None)


def load_tools_file(path: Path) -> tuple[list[CustomTool], list[str]]:
    """The tools of one file and the problems found, each naming the file and line.

    A syntax error loses the file; a bad tool loses only that tool.
    """
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [f"{path}: cannot be read: {exc.strerror or exc}"]
    if len(data) > MAX_FILE_BYTES:
        return [], [f"{path}: larger than {MAX_FILE_BYTES // 1024} KB; not loaded"]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad_line = data[:exc.start].count(b"\n") + 1
        return [], [f"{path}:{bad_line}: not valid UTF-8 text (TOML files must be UTF-8)"]
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = _TOML_WHERE_RE.match(str(exc))
        if m is not None:
            return [], [f"{path}:{m['line']}:{m['col']}: invalid TOML: {m['msg']}"]
        return [], [f"{path}: invalid TOML: {exc}"]
    lines = text.splitlines()
    tools: list[CustomTool] = []
    errors: list[str] = []
    seen: set[str] = set()
    for name, table, key_path in _tool_tables(doc, path, lines, errors):
        line = _header_line(lines, key_path) or _first_mention(lines, name)
        if name in seen:
            errors.append(f"{path}:{line or '?'}: tool '{name}' is defined twice; the first "
                          "definition is used")
            continue
        seen.add(name)
        try:
            tools.append(build_tool(name, table, ToolSource(path, line)))
        except ToolDefinitionError as exc:
            where: int | None = line
            if exc.param is not None:
                where = _header_line(lines, (*key_path, "parameters", exc.param)) or line
            errors.append(f"{path}:{where or '?'}: tool '{name}': {exc}")
    return tools, errors


def _tool_tables(doc: Mapping[str, Any], path: Path, lines: Sequence[str], errors: list[str]
                 ) -> list[tuple[str, Any, tuple[str, ...]]]:
    """``[name]`` tables, plus the ``[tools.custom.name]`` form (a pasted quorum.toml)."""
    out: list[tuple[str, Any, tuple[str, ...]]] = []
    for key, value in doc.items():
        if key != "tools":
            if isinstance(value, Mapping):
                out.append((key, value, (key,)))
            else:
                line = _first_mention(lines, key)
                errors.append(f"{path}:{line or '?'}: top-level key '{key}' is not a tool; "
                              f"define a tool as a table: [{key}] with description and command")
            continue
        if not isinstance(value, Mapping):
            errors.append(f"{path}: 'tools' must be a table ([tools.custom.<name>])")
            continue
        for sub, subvalue in value.items():
            if sub != "custom" or not isinstance(subvalue, Mapping):
                line = _header_line(lines, ("tools", sub)) or _first_mention(lines, sub)
                errors.append(f"{path}:{line or '?'}: [tools.{sub}] is not read from this file; "
                              "only [tools.custom.<name>] (or [<name>]) tables define tools")
                continue
            out.extend((n, t, ("tools", "custom", n)) for n, t in subvalue.items())
    return out


# -- the provider -------------------------------------------------------------------------------

class CustomToolsProvider:
    """Tools from ``<data dir>/tools.toml`` and ``<project>/.tebiki/tools.toml``.

    ``reload()`` (or ``reload_if_changed()``) re-reads the files; call ``registry.refresh()``
    afterwards so routing sees the new list. ``load_errors`` lists what could not be loaded.
    """

    id = "custom"
    display_name = "Custom tools (tools.toml)"
    priority = int(ProviderPriority.CUSTOM)

    def __init__(self, data_dir: str | os.PathLike[str] | None,
                 project_root: str | os.PathLike[str] | None = None, *,
                 reserved_names: Collection[str] | None = None) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.project_root = Path(project_root) if project_root is not None else None
        # Names a project file may not define (default: the built-in tools).
        self._reserved = frozenset(reserved_names) if reserved_names is not None else None
        self.load_errors: list[str] = []
        self._tools: list[CustomTool] = []
        self._signature: tuple[Any, ...] = ()
        self.reload()

    def files(self) -> list[Path]:
        """The files read, lowest precedence first."""
        out = []
        if self.data_dir is not None:
            out.append(self.data_dir / TOOLS_FILE)
        if self.project_root is not None:
            out.append(self.project_root / PROJECT_TOOLS_FILE)
        return out

    def set_project_root(self, root: str | os.PathLike[str] | None) -> list[str]:
        self.project_root = Path(root) if root is not None else None
        return self.reload()

    def reload(self) -> list[str]:
        """Re-read the files; returns (and keeps) the load errors."""
        signature = self._current_signature()
        by_name: dict[str, CustomTool] = {}
        errors: list[str] = []
        for path in self.files():
            tools, problems = load_tools_file(path)
            errors.extend(problems)
            for tool in tools:
                if self._is_project_file(path) and tool.name in self.reserved_names():
                    errors.append(
                        f"{tool.source}: tool '{tool.name}' is not loaded: a project's tools.toml "
                        f"cannot replace the built-in {tool.name}. Rename it, or define it in "
                        f"your own {TOOLS_FILE} in the data folder.")
                    continue
                if self._is_project_file(path):
                    # Rules the person wrote for their own custom tools must never approve a
                    # repository's same-named replacement: project tools are their own server.
                    tool = replace(tool, server_id=PROJECT_SERVER_ID)
                by_name.pop(tool.name, None)  # the later file wins, and lists it in its order
                by_name[tool.name] = tool
        self._tools = list(by_name.values())
        self.load_errors = errors
        self._signature = signature
        return list(errors)

    def reserved_names(self) -> frozenset[str]:
        return self._reserved if self._reserved is not None else _builtin_names()

    def _is_project_file(self, path: Path) -> bool:
        return self.project_root is not None and path == self.project_root / PROJECT_TOOLS_FILE

    def reload_if_changed(self) -> bool:
        """Reload when a file appeared, vanished or changed; True when it reloaded."""
        if self._current_signature() == self._signature:
            return False
        self.reload()
        return True

    def _current_signature(self) -> tuple[Any, ...]:
        out: list[tuple[str, int | None, int | None, int | None]] = []
        for path in self.files():
            try:
                st = os.stat(path)
                out.append((str(path), st.st_mtime_ns, st.st_size, st.st_ino))
            except OSError:
                out.append((str(path), None, None, None))
        return tuple(out)

    def unavailable(self) -> dict[str, str]:
        """Tool name → why its program cannot run now (for the tools list)."""
        out = {}
        for tool in self._tools:
            problem = tool.program_problem(self.project_root)
            if problem is not None:
                out[tool.name] = problem
        return out

    def is_available(self) -> bool:
        return True  # a missing file just means no tools; errors are in load_errors

    def tools(self) -> Sequence[Tool]:
        return list(self._tools)
