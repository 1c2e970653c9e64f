"""Checkpoints around the agent's calls: a shell command's side effects are recorded, shown
(FilesChanged), written to the audit row, and undone byte for byte — per call and per run —
without touching the project's own .git; then redone."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path

from app.core.agent.checkpointing import Checkpointer
from app.core.agent.events import FilesChanged, ToolFinished
from tests.fakes.anthropic_server import Response, tool
from tests.unit.agent.helpers import Harness


def tree_state(root: Path) -> dict[str, tuple[str, int | str]]:
    """Every entry but .git: (kind, content hash and executable bit, or link target)."""
    out: dict[str, tuple[str, int | str]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                out[rel] = ("link", os.readlink(path))
            else:
                data = Path(path).read_bytes()
                mode = os.stat(path).st_mode & stat.S_IXUSR
                out[rel] = (hashlib.sha256(data).hexdigest(), mode)
    return out


def git_dir_state(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((root / ".git").rglob("*")) if p.is_file()}


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def make_project(project: Path) -> None:
    (project / "a.txt").write_text("alpha\n")
    (project / "b.txt").write_text("bravo\n")
    (project / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (project / "blob.bin").write_bytes(bytes(range(256)) * 64)
    (project / "link").symlink_to("a.txt")
    git(project, "init", "-q")
    git(project, "add", "a.txt")
    git(project, "-c", "user.email=t@e", "-c", "user.name=T", "commit", "-qm", "first")
    (project / "a.txt").write_text("alpha, edited but not committed\n")
    git(project, "add", "b.txt")  # staged, not committed


def enable_shell(harness: Harness) -> None:
    harness.enable("shell_exec", allowed_commands=["rm", "mv", "chmod", "cp", "ln"])
    harness.allow("shell_exec")


COMMAND = ("rm b.txt && mv run.sh tool.sh && chmod +x tool.sh && cp a.txt blob.bin "
           "&& rm link && ln -s b-gone link2")


async def test_a_runs_side_effects_are_recorded_and_undone_exactly(
        harness: Harness, fresh_data_dir: Path) -> None:
    project = harness.project
    make_project(project)
    before_tree, before_git = tree_state(project), git_dir_state(project)
    enable_shell(harness)
    harness.server.script(
        Response.tools(tool("shell_exec", {"command": COMMAND}, id="toolu_1")),
        Response.text("Done."))
    checkpointer = Checkpointer(fresh_data_dir, project)
    session = harness.session(checkpointer=checkpointer)

    await session.run("tidy up")

    finished = harness.of(ToolFinished)[0]
    assert not finished.is_error, finished.content
    changed = harness.of(FilesChanged)
    assert len(changed) == 1 and changed[0].tool_use_id == "toolu_1"
    kinds = {c.path: c.kind for c in changed[0].changes.changes}
    assert kinds["b.txt"] == "deleted" and kinds["blob.bin"] == "modified"
    assert "tool.sh" in kinds and "link2" in kinds
    assert changed[0].changes.summary().endswith("files changed")
    row = harness.audit()[-1]
    assert row.changes["after"] == changed[0].changes.after.id
    assert {c["path"] for c in row.changes["changes"]} == {c.path for c in
                                                            changed[0].changes.changes}
    assert tree_state(project) != before_tree

    plan = await checkpointer.plan_undo([changed[0].changes])
    assert not plan.conflicts
    undo = await checkpointer.apply(plan, [changed[0].changes])
    assert undo.result.ok, undo.result.errors
    assert tree_state(project) == before_tree  # bytes, executable bits and links
    assert git_dir_state(project) == before_git  # the person's .git: index, refs, objects

    redo = await checkpointer.plan_redo(undo)
    await checkpointer.apply(redo, undo.calls)
    assert not (project / "b.txt").exists() and (project / "tool.sh").exists()
    assert git_dir_state(project) == before_git


async def test_a_file_the_person_edited_since_is_a_conflict(harness: Harness,
                                                             fresh_data_dir: Path) -> None:
    project = harness.project
    (project / "notes.txt").write_text("v1\n")
    enable_shell(harness)
    harness.server.script(
        Response.tools(tool("shell_exec", {"command": "cp notes.txt copy.txt && rm notes.txt"},
                            id="toolu_1")),
        Response.text("Done."))
    checkpointer = Checkpointer(fresh_data_dir, project)
    await harness.session(checkpointer=checkpointer).run("go")
    changes = harness.of(FilesChanged)[0].changes
    (project / "copy.txt").write_text("the person's own edit\n")

    plan = await checkpointer.plan_undo([changes])
    assert plan.conflicts == ("copy.txt",)
    await checkpointer.apply(plan, [changes])  # no resolution: the person's file is kept
    assert (project / "copy.txt").read_text() == "the person's own edit\n"
    assert (project / "notes.txt").read_text() == "v1\n"


async def test_reading_tools_take_no_checkpoint(harness: Harness, fresh_data_dir: Path) -> None:
    (harness.project / "a.txt").write_text("x\n")
    harness.allow("read_file")
    harness.server.script(
        Response.tools(tool("read_file", {"path": "a.txt"}, id="toolu_1")),
        Response.text("Read."))
    checkpointer = Checkpointer(fresh_data_dir, harness.project)
    await harness.session(checkpointer=checkpointer).run("read")
    assert harness.of(FilesChanged) == []
    assert checkpointer.store.checkpoints() == []
