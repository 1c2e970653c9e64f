"""Files the person's tools run by themselves are never changed by a call nobody approved.

A command that runs unasked (auto mode) finds the existing ones read-only (git hooks folders,
editor tasks, ``.envrc``, ``.pth`` files); one it creates is put back as it was before the
model reads the result, which says so. The real AgentSession against the fake model; the
proof is the files on disk afterwards.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.agent.checkpointing import Checkpointer
from app.core.agent.events import ToolFinished
from app.core.permission_mode import PermissionMode
from tests.fakes.anthropic_server import Response, tool
from tests.sandbox_support import requires_sandbox
from tests.unit.agent.helpers import Harness

pytestmark = requires_sandbox

TASKS = '{"tasks": [{"label": "build", "command": "make"}]}\n'


@pytest.fixture
def project(visible: Path) -> Path:
    root = visible / "project"
    root.mkdir()
    (root / "src.py").write_text("print('hi')\n")
    (root / ".vscode").mkdir()
    (root / ".vscode" / "tasks.json").write_text(TASKS)
    (root / "lib").mkdir()
    (root / "lib" / "site.pth").write_text("/opt/lib\n")
    return root


async def _run_unasked(harness: Harness, data_dir: Path, command: str) -> str:
    harness.update_profile(permission_mode=PermissionMode.AUTO)
    harness.enable("shell_exec", program_level="any_sandboxed")
    harness.server.script(Response.tools(tool("shell_exec", {"command": command},
                                              id="toolu_1")),
                          Response.text("Done."))
    await harness.session(checkpointer=Checkpointer(data_dir, harness.project)).run("go")
    assert harness.approver.requests == []  # it ran unasked: the walls did the work
    return harness.of(ToolFinished)[0].content


async def test_existing_persistence_files_are_read_only_to_an_unasked_command(
        harness: Harness, fresh_data_dir: Path) -> None:
    project = harness.project
    await _run_unasked(harness, fresh_data_dir,
                       "sh -c 'echo evil > .vscode/tasks.json; echo import os > lib/site.pth; "
                       "echo changed > src.py'")
    assert (project / ".vscode" / "tasks.json").read_text() == TASKS
    assert (project / "lib" / "site.pth").read_text() == "/opt/lib\n"
    assert (project / "src.py").read_text() == "changed\n"  # ordinary work still happens


async def test_a_new_persistence_file_is_put_back_and_the_model_told(
        harness: Harness, fresh_data_dir: Path) -> None:
    project = harness.project
    content = await _run_unasked(
        harness, fresh_data_dir,
        "sh -c 'echo \"repos: []\" > .pre-commit-config.yaml; mkdir -p .husky; "
        "echo x > .husky/pre-commit; echo import os > sitecustomize.py; echo ok > notes.txt'")
    assert not (project / ".pre-commit-config.yaml").exists()
    assert not (project / ".husky" / "pre-commit").exists()
    assert not (project / "sitecustomize.py").exists()
    assert (project / "notes.txt").read_text() == "ok\n"
    assert ".pre-commit-config.yaml" in content and "undone" in content


async def test_a_repository_an_unasked_command_creates_is_removed_and_the_retry_asks(
        harness: Harness, fresh_data_dir: Path) -> None:
    # Checkpoints never record git metadata: a new .git with an fsmonitor would run in the
    # person's own `git status` later. The project here has no .git of its own.
    project = harness.project
    plant = ("sh -c 'mkdir -p vendor/lib/.git/hooks && "
             "printf \"[core]\\n\\tfsmonitor = touch pwned\\n\" > vendor/lib/.git/config"
             " && git init -q . && echo ok > notes.txt'")
    harness.update_profile(permission_mode=PermissionMode.AUTO)
    harness.enable("shell_exec", program_level="any_sandboxed")
    harness.server.script(
        Response.tools(tool("shell_exec", {"command": plant}, id="toolu_1")),
        Response.tools(tool("shell_exec", {"command": plant}, id="toolu_2")),
        Response.text("Done."))
    await harness.session(checkpointer=Checkpointer(fresh_data_dir, project)).run("go")
    assert not (project / ".git").exists()
    assert not (project / "vendor" / "lib" / ".git").exists()
    assert (project / "notes.txt").read_text() == "ok\n"
    first = harness.of(ToolFinished)[0].content
    assert "git metadata" in first and "removed" in first
    # The same call again is not run unasked (the approver, with no answer, declines).
    assert [r.tool_use_id for r in harness.approver.requests] == ["toolu_2"]
