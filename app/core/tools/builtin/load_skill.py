"""load_skill: the instructions of one Agent Skill (app.core.skills), loaded when the model
decides a task needs it; the system prompt lists only the skills' names and descriptions."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.core.config import resolve_paths
from app.core.skills import SkillError, find_skills, read_skill
from app.core.tools.base import (
    DefaultRule,
    RiskLevel,
    ToolCategory,
    ToolContext,
    ToolResult,
    ToolSpec,
    parse_input,
)
from app.core.tools.params.declaration import Params, param

MAX_LISTED_FILES = 50


class LoadSkillParams(Params):
    name: str = param(description="The skill's name, as listed in the system prompt.",
                      min_length=1, max_length=64)


class LoadSkillTool:
    def __init__(self) -> None:
        self.spec = ToolSpec(
            name="load_skill",
            description=("Load the instructions of one of the skills listed in the system "
                         "prompt, with the list of its other files (read them with read_file "
                         "when the instructions say to)."),
            input_schema=LoadSkillParams.json_schema(), params=LoadSkillParams,
            category=ToolCategory.READ_ONLY, risk=RiskLevel.LOW, read_only=True,
            default_enabled=True,
            default_rules=(DefaultRule("allow", description="load_skill reads a skill's "
                                                             "instructions"),),
            prompt_conventions=("When a listed skill fits the task, load it with load_skill "
                                "before you start, and follow it.",),
            prompt_order=5)

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        p = parse_input(LoadSkillParams, "load_skill", input)
        if isinstance(p, ToolResult):
            return p
        return await asyncio.to_thread(_load, p.name, ctx.project_root)


def _load(name: str, project_root: Path) -> ToolResult:
    found = find_skills(project_root, resolve_paths().data_dir)
    skill = found.named(name)
    if skill is None:
        known = ", ".join(s.name for s in found.skills) or "none"
        return ToolResult.error(f"No skill named {name!r}. Skills: {known}.")
    try:
        _meta, body = read_skill(skill.folder)
    except SkillError as exc:
        return ToolResult.error(str(exc))
    files = sorted(str(p.relative_to(skill.folder)) for p in skill.folder.rglob("*")
                   if p.is_file() and p.name != "SKILL.md")
    where = _shown(skill.folder, project_root)
    listing = "\n".join(f"- {where}/{f}" for f in files[:MAX_LISTED_FILES])
    more = f"\n- … and {len(files) - MAX_LISTED_FILES} more" \
        if len(files) > MAX_LISTED_FILES else ""
    return ToolResult.ok(f"Skill {name} ({where}/SKILL.md):\n\n{body}"
                         + (f"\n\nIts other files:\n{listing}{more}" if files else ""))


def _shown(folder: Path, project_root: Path) -> str:
    try:
        return str(folder.relative_to(project_root))
    except ValueError:
        return str(folder)


def create() -> LoadSkillTool:
    return LoadSkillTool()
