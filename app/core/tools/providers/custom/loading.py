"""Reading tools.toml: validating tool tables and reporting problems with file and line."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.core.safe_read import (
    FileMissingError,
    FileTooLargeError,
    UnsafeReadError,
    read_project_file,
)
from app.core.tools.base import RiskLevel, ToolCategory
from app.core.tools.command_sandbox import WRITE_FOLDERS_FIELD
from app.core.tools.config_fields import InvalidConfigValue
from app.core.tools.providers.custom.template import (
    Param,
    RenderError,
    TemplateError,
    Word,
    parse_template,
)
from app.core.tools.providers.custom.tool import CustomTool, ToolSource

MAX_FILE_BYTES = 1 << 20
MAX_TIMEOUT_S = 3600.0
TYPES = ("string", "integer", "number", "boolean")
TOOL_KEYS = ("description", "command", "risk_level", "risk", "category", "timeout",
             "network", "write_folders", "parameters")
PARAM_KEYS = ("type", "description", "required", "enum", "default", "flag", "minimum",
              "maximum", "allow_leading_dash")
_TOOL_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what the Messages API accepts
_PARAM_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_TOML_WHERE_RE = re.compile(r"^(?P<msg>.*?)\s*\(at line (?P<line>\d+), column (?P<col>\d+)\)$",
                            re.DOTALL)


class ToolDefinitionError(ValueError):
    """One tool table is invalid; ``param`` names the parameter, for the line number."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param



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


def _write_folders(table: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The ``write_folders`` key: None when absent (the project folder), else the folders."""
    if "write_folders" not in table:
        return None
    value = table["write_folders"]
    example = ("write_folders = [\".\", \"build\"] (relative to the project folder, or "
               "absolute; [] for a tool that writes nowhere)")
    if not isinstance(value, list):
        raise ToolDefinitionError(f"write_folders must be a list of folders, e.g. {example}; "
                                  f"got {value!r}")
    folders: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item.strip() or "\x00" in item:
            raise ToolDefinitionError(f"write_folders: {item!r} is not a folder; give "
                                      f"folder names as strings, e.g. {example}")
        try:
            WRITE_FOLDERS_FIELD.check_input([item.strip()])
        except InvalidConfigValue:
            raise ToolDefinitionError(f"write_folders: {item.strip()} is a system folder; a "
                                      "tool may write only in project folders") from None
        folders.append(item.strip())
    return tuple(dict.fromkeys(folders))


def build_tool(name: str, table: Any, source: ToolSource | None = None) -> CustomTool:
    """A CustomTool from one TOML table; ToolDefinitionError says what is wrong."""
    if not _TOOL_NAME_RE.fullmatch(name):
        raise ToolDefinitionError("tool names use 1-64 letters, digits, _ or - (what the model "
                                  "API accepts)")
    if not isinstance(table, Mapping):
        raise ToolDefinitionError("must be a table with description and command")
    _check_keys(table, TOOL_KEYS, "tool")
    description = _description(table)
    command, words = _command(table)
    risk = _risk(table)
    category = _category(table)
    timeout = _timeout(table)
    network = table.get("network", False)
    if not isinstance(network, bool):
        raise ToolDefinitionError(f"network must be true or false (default false: the program "
                                  f"runs without network access), got {network!r}")
    write_folders = _write_folders(table)
    params = _params(name, table)
    _check_placeholders(words, params)
    return CustomTool(name=name, description=description, command=command,
                      words=words, params=params, risk=risk, category=category,
                      timeout_s=timeout, source=source,
                      network=network, write_folders=write_folders)


def _description(table: Mapping[str, Any]) -> str:
    description = table.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ToolDefinitionError("description is missing: say what the tool does, for the "
                                  "model and in the approval dialog")
    return description.strip()


def _command(table: Mapping[str, Any]) -> tuple[str, list[Word]]:
    """The command template as written, and its words."""
    command = table.get("command")
    if not isinstance(command, str):
        raise ToolDefinitionError("command is missing: a string such as "
                                  "\"gh issue view {number}\"")
    try:
        return command, parse_template(command)
    except TemplateError as exc:
        raise ToolDefinitionError(str(exc)) from None


def _risk(table: Mapping[str, Any]) -> RiskLevel:
    if "risk" in table and "risk_level" in table:
        raise ToolDefinitionError("give risk_level or risk, not both")
    risk_text = table.get("risk_level", table.get("risk", "high"))
    try:
        return RiskLevel(risk_text)
    except ValueError:
        raise ToolDefinitionError(f"risk_level {risk_text!r} is unknown; use \"low\" or "
                                  "\"high\" (default high)") from None


def _category(table: Mapping[str, Any]) -> ToolCategory:
    category_text = table.get("category", ToolCategory.EXECUTION.value)
    try:
        return ToolCategory(category_text)
    except ValueError:
        raise ToolDefinitionError(f"category {category_text!r} is unknown; use one of "
                                  f"{', '.join(c.value for c in ToolCategory)}") from None


def _timeout(table: Mapping[str, Any]) -> float | None:
    timeout = table.get("timeout")
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) \
            or not 0 < timeout <= MAX_TIMEOUT_S:
        raise ToolDefinitionError(f"timeout must be a number of seconds above 0 and at most "
                                  f"{MAX_TIMEOUT_S:g}, got {timeout!r}")
    return float(timeout)


def _params(name: str, table: Mapping[str, Any]) -> dict[str, Param]:
    raw_params = table.get("parameters", {})
    if not isinstance(raw_params, Mapping):
        raise ToolDefinitionError("parameters must be a table of tables, e.g. "
                                  f"[{name}.parameters.path]")
    return {pname: _build_param(pname, ptable) for pname, ptable in raw_params.items()}


def _check_placeholders(words: list[Word], params: Mapping[str, Param]) -> None:
    """Every placeholder is a declared parameter (a flagged one a word of its own), and every
    parameter is used."""
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
    try:  # a FIFO or device named tools.toml is refused at once, never waited on
        data = read_project_file(path, max_bytes=MAX_FILE_BYTES)
    except FileMissingError:
        return [], []
    except FileTooLargeError:
        return [], [f"{path}: larger than {MAX_FILE_BYTES // 1024} KB; not loaded"]
    except UnsafeReadError as exc:
        return [], [f"{exc} Not loaded."]
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
