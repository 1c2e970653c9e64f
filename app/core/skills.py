"""Agent Skills: folders with a ``SKILL.md`` (frontmatter ``name`` and ``description``, then
the instructions), in the project's ``.agents/skills/`` or ``.claude/skills/`` or the data
folder's ``skills/``.

Progressive disclosure, as the format has it: the system prompt lists each skill's name and
description only; the model loads a skill's instructions with the ``load_skill`` tool when a
task needs it, and reads the skill's other files (scripts, references) with the file tools.
A skill widens nothing: its text is instructions to read, its scripts run only through the
tools, decided like any call. Files are read without blocking (app.core.safe_read) and a
broken one is skipped with a problem the person can read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from app.core.frontmatter import FrontmatterError, split_frontmatter
from app.core.safe_read import UnsafeReadError, read_project_file

PROJECT_FOLDERS = (".agents/skills", ".claude/skills")
DATA_FOLDER = "skills"
SKILL_FILE = "SKILL.md"
NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
MAX_DESCRIPTION = 1024
MAX_SKILL_BYTES = 256 * 1024
MAX_SKILLS = 100


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    in_project: bool  # the project's (untrusted content unless the project is trusted)


@dataclass(frozen=True)
class FoundSkills:
    skills: tuple[Skill, ...]
    problems: tuple[str, ...] = ()

    def named(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)


def find_skills(project_root: Path, data_dir: Path | None) -> FoundSkills:
    """The skills for ``project_root`` (its folders first; a name is kept once). Reads
    files: call it off the GUI thread."""
    places = [(project_root / f, True) for f in PROJECT_FOLDERS]
    if data_dir is not None:
        places.append((data_dir / DATA_FOLDER, False))
    skills: dict[str, Skill] = {}
    problems: list[str] = []
    for folder, in_project in places:
        try:
            candidates = sorted(p for p in folder.iterdir() if p.is_dir())
        except OSError:
            continue
        for candidate in candidates:
            if len(skills) >= MAX_SKILLS:
                problems.append(f"more than {MAX_SKILLS} skills; the rest are skipped")
                return FoundSkills(tuple(skills.values()), tuple(problems))
            try:
                meta, _body = read_skill(candidate)
            except SkillError as exc:
                problems.append(str(exc))
                continue
            name = meta["name"]
            skills.setdefault(name, Skill(name, meta["description"], candidate, in_project))
    return FoundSkills(tuple(skills.values()), tuple(problems))


class SkillError(ValueError):
    """A skill that cannot be used; the message names its file."""


def read_skill(folder: Path) -> tuple[dict[str, str], str]:
    """({"name", "description"}, the instructions) of the skill in ``folder``."""
    path = folder / SKILL_FILE
    try:
        text = read_project_file(path, max_bytes=MAX_SKILL_BYTES).decode("utf-8")
        meta, body = split_frontmatter(text, str(path))
    except (UnsafeReadError, OSError, UnicodeDecodeError, FrontmatterError) as exc:
        raise SkillError(str(exc) if isinstance(exc, FrontmatterError)
                         else f"{path}: {exc}") from None
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not NAME.match(name):
        raise SkillError(f"{path}: name must be 1-64 lower-case letters, digits or '-'")
    if not isinstance(description, str) or not description.strip():
        raise SkillError(f"{path}: a description is required")
    return {"name": name, "description": description.strip()[:MAX_DESCRIPTION]}, body
