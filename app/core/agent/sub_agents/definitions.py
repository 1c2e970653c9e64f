"""What a sub-agent is: a name, its instructions, the tools it asks for, a model, an optional
result schema, and where it was defined.

Two ways to define one: the model's ``create_sub_agent`` call, or a Markdown file the person
keeps in ``.tebiki/agents/`` (or ``.claude/agents/``, the same format) in the project, or in the
data folder's ``agents/``. A file's frontmatter is the one people already write for
``.claude/agents``::

    ---
    name: researcher
    description: Finds things in the code base
    tools: Read, Grep, Glob        # or a YAML list; Tebiki's names work too
    model: claude-haiku-4-5        # optional
    ---
    You are a careful researcher. …   (the body: its instructions)

A definition never grants anything: its ``tools`` are only asked for, and the child gets those
of them its parent was offered (app.core.agent.agent_scope). Without ``tools`` a sub-agent has
none (it thinks and answers). Files are read without blocking (app.core.safe_read: a FIFO named
``x.md`` cannot hang the app) and a broken one is skipped with a problem the person can read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.frontmatter import FrontmatterError, split_frontmatter
from app.core.permission_mode import PermissionMode
from app.core.safe_read import UnsafeReadError, read_project_file

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_FILE_BYTES = 64 * 1024
MAX_FILES = 100
MAX_INSTRUCTIONS = 20_000
# Where the files are, in the order a name is looked up (the project's own first).
PROJECT_FOLDERS = (".tebiki/agents", ".claude/agents")
DATA_FOLDER = "agents"

# Claude Code's tool names in ``.claude/agents`` files, as Tebiki's.
_CLAUDE_TOOLS = {
    "read": "read_file", "write": "write_file", "edit": "edit_file", "multiedit": "edit_file",
    "glob": "glob_search", "grep": "grep_search", "ls": "list_directory",
    "bash": "shell_exec", "webfetch": "web_fetch", "websearch": "web_search",
}


class DefinitionError(ValueError):
    """A definition that cannot be used; the message says what to fix."""


@dataclass(frozen=True)
class SubAgentDefinition:
    name: str
    instructions: str
    description: str = ""
    tools: tuple[str, ...] = ()
    model: str | None = None
    result_schema: Mapping[str, Any] | None = field(default=None, compare=False)
    # The mode it asks for; it gets the stricter of this and its parent's.
    mode: PermissionMode | None = None
    source: str = "defined by the model"

    @property
    def from_project(self) -> bool:
        """Defined by a file of the project (it came with the repository, like its other
        files; ``source`` is then relative to the project)."""
        return self.source.startswith(PROJECT_FOLDERS)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "instructions": self.instructions,
                "description": self.description, "tools": list(self.tools),
                "model": self.model, "result_schema": self.result_schema,
                "mode": self.mode.value if self.mode is not None else None,
                "source": self.source}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SubAgentDefinition:
        mode = data.get("mode")
        schema = data.get("result_schema")
        return cls(name=str(data["name"]), instructions=str(data.get("instructions", "")),
                   description=str(data.get("description", "")),
                   tools=tuple(str(t) for t in data.get("tools") or ()),
                   model=str(data["model"]) if data.get("model") else None,
                   result_schema=schema if isinstance(schema, Mapping) else None,
                   mode=PermissionMode.parse(mode) if mode else None,
                   source=str(data.get("source", "")))


def checked_name(name: object) -> str:
    if not isinstance(name, str) or not NAME.match(name):
        raise DefinitionError(
            f"invalid sub-agent name {name!r}: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit")
    return name


def tool_names(value: object) -> tuple[str, ...]:
    """The tools a definition asks for, as Tebiki's names (Claude Code's are translated)."""
    if value is None or value == "":
        return ()
    items: Iterable[object]
    if isinstance(value, str):
        items = [v for v in re.split(r"[,\s]+", value.strip().strip("[]")) if v]
    elif isinstance(value, list | tuple):
        items = value
    else:
        raise DefinitionError("tools must be a list of tool names")
    names: list[str] = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise DefinitionError("tools must be a list of tool names")
        raw = item.strip().strip("'\"")
        names.append(_CLAUDE_TOOLS.get(raw.lower(), raw))
    return tuple(dict.fromkeys(names))


def parse_file(text: str, source: str) -> SubAgentDefinition:
    """The definition in a Markdown file with ``---`` frontmatter (see the module docstring).
    Raises DefinitionError."""
    try:
        meta, body = split_frontmatter(text, source)
    except FrontmatterError as exc:
        raise DefinitionError(str(exc)) from None
    name = checked_name(meta.get("name") or Path(source).stem)
    model = meta.get("model")
    if model in ("inherit", ""):
        model = None
    return SubAgentDefinition(
        name=name, instructions=body[:MAX_INSTRUCTIONS],
        description=str(meta.get("description") or ""),
        tools=tool_names(meta.get("tools")),
        model=str(model) if model else None, source=source)


@dataclass(frozen=True)
class LoadedDefinitions:
    """The definitions found in files, by name (the first found wins), and the problems of the
    files that could not be used."""

    by_name: Mapping[str, SubAgentDefinition]
    problems: tuple[str, ...] = ()


def load_definitions(project_root: Path, data_dir: Path | None) -> LoadedDefinitions:
    """The sub-agents defined as files for ``project_root`` (its folders first, then the
    data folder's). Reads files: call it off the GUI thread."""
    folders = [project_root / f for f in PROJECT_FOLDERS]
    if data_dir is not None:
        folders.append(data_dir / DATA_FOLDER)
    found: dict[str, SubAgentDefinition] = {}
    problems: list[str] = []
    seen = 0
    for folder in folders:
        try:
            entries = sorted(p for p in folder.iterdir() if p.suffix == ".md")
        except OSError:
            continue
        for path in entries:
            seen += 1
            if seen > MAX_FILES:
                problems.append(f"{folder}: more than {MAX_FILES} agent files; the rest are "
                                "skipped")
                break
            shown = _shown(path, project_root)
            try:
                text = read_project_file(path, max_bytes=MAX_FILE_BYTES).decode("utf-8")
                definition = parse_file(text, shown)
            except (UnsafeReadError, OSError, UnicodeDecodeError, DefinitionError) as exc:
                problems.append(str(exc) if isinstance(exc, DefinitionError)
                                else f"{shown}: {exc}")
                continue
            found.setdefault(definition.name, definition)
    return LoadedDefinitions(found, tuple(problems))


def _shown(path: Path, project_root: Path) -> str:
    try:
        return str(path.relative_to(project_root))
    except ValueError:
        return str(path)


def child_system_prompt(definition: SubAgentDefinition) -> str:
    """The child's system prompt: who it is, that its answer goes back to its parent and
    that a declined call did not happen, then its instructions (and the JSON it must answer
    with, when it has a result schema)."""
    schema_note = ""
    if definition.result_schema is not None:
        schema_note = ("\n\nAnswer with JSON only, matching this schema:\n"
                       + json.dumps(definition.result_schema))
    return (f"You are the sub-agent {definition.name!r}, started by another agent for one "
            "task. Do the task with the tools you have, then answer with your result; your "
            "final answer goes back to that agent. Calls the person declines or the rules "
            "deny did not happen: say so rather than claiming success.\n\n"
            f"{definition.instructions}{schema_note}")
