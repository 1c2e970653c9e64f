"""Agent Skills: listed by name and description in the system prompt, loaded whole only when
the model asks (load_skill), from the project's and the data folder's skill folders; a broken
or special file is skipped, never a hang; an untrusted project's skills are untrusted content."""

from __future__ import annotations

import json
import os
from pathlib import Path

from app.core.permissions.flow import FlowLabel
from app.core.skills import find_skills
from tests.fakes.anthropic_server import Response, tool
from tests.unit.agent.helpers import Harness


def _skill(root: Path, folder: str, name: str, description: str, body: str = "Do it.") -> Path:
    path = root / folder / name
    path.mkdir(parents=True)
    (path / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}")
    return path


def test_skills_are_found_in_their_folders(tmp_path: Path) -> None:
    project, data = tmp_path / "p", tmp_path / "d"
    _skill(project, ".agents/skills", "pdf-forms", "Fill PDF forms")
    _skill(project, ".claude/skills", "release", "Cut a release")
    _skill(data, "skills", "mine", "My own habits")
    _skill(data, "skills", "release", "Shadowed by the project's")
    broken = project / ".agents" / "skills" / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("no frontmatter")
    fifo = project / ".agents" / "skills" / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "SKILL.md")
    found = find_skills(project, data)
    assert [(s.name, s.in_project) for s in found.skills] == [
        ("pdf-forms", True), ("release", True), ("mine", False)]
    assert found.named("release") is not None
    assert found.named("release").description == "Cut a release"  # type: ignore[union-attr]
    assert len(found.problems) == 2


async def test_the_prompt_lists_skills_and_load_skill_reads_one(harness: Harness) -> None:
    harness.enable("load_skill")
    skill = _skill(harness.project, ".agents/skills", "pdf-forms", "Fill PDF forms",
                   body="Step 1: run scripts/fill.py.")
    (skill / "scripts").mkdir()
    (skill / "scripts" / "fill.py").write_text("print('x')\n")
    harness.allow("load_skill")
    harness.server.script(
        Response.tools(tool("load_skill", {"name": "pdf-forms"}, id="s1")),
        Response.tools(tool("load_skill", {"name": "nope"}, id="s2")),
        Response.text("done"))
    session = harness.session()
    await session.run("fill the form")
    system = json.dumps(harness.server.message_requests[0].body["system"])
    assert "pdf-forms: Fill PDF forms" in system
    assert "Step 1" not in system  # the body only when loaded
    results = {b["tool_use_id"]: b for m in harness.server.last_request.messages
               if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"}
    assert "Step 1: run scripts/fill.py." in str(results["s1"]["content"])
    assert ".agents/skills/pdf-forms/scripts/fill.py" in str(results["s1"]["content"])
    assert results["s2"]["is_error"] and "pdf-forms" in str(results["s2"]["content"])
    # The project is not trusted: its skills are untrusted content.
    assert session.flow.has(FlowLabel.UNTRUSTED)
