"""A write-capable sub-agent works in a run workspace of its own (a clone of the parent's
project on ``tebiki/<id>``), through the real loop and the fake Messages API: the parent's
project is untouched until the person reviews and applies; the parent reads where the changes
wait; a child that changed nothing leaves no workspace; a child without write tools, or a
project that is no git repository, works as before."""

from __future__ import annotations

import subprocess
from pathlib import Path

from app.core.agent.checkpointing import Checkpointer
from app.core.agent.events import SubAgentUpdated
from app.core.permission_mode import PermissionMode
from app.core.worktrees.apply import apply, plan_apply
from app.core.worktrees.review import run_changes
from app.core.worktrees.workspace import Worktrees
from tests.fakes.anthropic_server import Response, tool
from tests.unit.agent.helpers import Harness
from tests.unit.agent.sub_agents.test_child_scope_redteam import _orchestrating
from tests.unit.agent.sub_agents.test_delegation import _create, _execute, _results, _text


def _git_project(project: Path) -> None:
    env = ["-c", "user.name=Person", "-c", "user.email=p@example.org"]
    (project / "a.txt").write_text("one\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 [*env, "commit", "-q", "-m", "first"]):
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


def _script(harness: Harness, *child: Response) -> None:
    harness.enable("write_file", allowed_write_dirs=["."])
    _orchestrating(harness, PermissionMode.AUTO)
    harness.server.script(
        _create("editor", "c1", tools=["write_file"], mode="auto", model="child-model"),
        _execute("editor", "e1"), Response.text("done"))
    harness.server.script_for("child-model", *child)


async def test_a_writing_child_works_in_its_own_workspace_and_comes_back_by_review(
        harness: Harness, fresh_data_dir: Path) -> None:
    _git_project(harness.project)
    _script(harness, Response.tools(tool("write_file", {"path": "a.txt", "content": "two\n"},
                                         id="w1")), Response.text("I changed a.txt."))
    parent_checkpoints = Checkpointer(fresh_data_dir, harness.project)
    await harness.session(checkpointer=parent_checkpoints, data_dir=fresh_data_dir).run("go")

    assert (harness.project / "a.txt").read_text() == "one\n"  # not yet in the project
    result = _text(_results(harness)["e1"])
    worktrees = Worktrees(fresh_data_dir)
    (workspace,) = worktrees.all()
    assert f"waiting for review in {workspace.branch}" in result
    assert (workspace.repo / "a.txt").read_text() == "two\n"
    row = harness.of(SubAgentUpdated)[-1]
    assert row.status == "done" and workspace.conversation_id == row.conversation_id
    assert row.workspace_branch == workspace.branch  # its row offers Review changes
    assert worktrees.stale(lambda cid: cid == row.conversation_id) == []
    # The person's review: the change, applied through the project's checkpoints.
    changes = await run_changes(worktrees, workspace)
    assert [(c.path, c.status) for c in changes] == [("a.txt", "modified")]
    items = await plan_apply(workspace, harness.project, changes)
    applied = await apply(harness.project, items, {}, parent_checkpoints, "apply editor")
    assert (harness.project / "a.txt").read_text() == "two\n"
    assert applied is not None and "a.txt" in applied.paths


async def test_a_child_that_changed_nothing_leaves_no_workspace(
        harness: Harness, fresh_data_dir: Path) -> None:
    _git_project(harness.project)
    _script(harness, Response.text("Nothing to change."))
    await harness.session(data_dir=fresh_data_dir).run("go")
    assert "waiting for review" not in _text(_results(harness)["e1"])
    assert Worktrees(fresh_data_dir).all() == []
    assert harness.of(SubAgentUpdated)[-1].workspace_branch == ""


async def test_without_a_repository_the_child_edits_the_project_as_before(
        harness: Harness, fresh_data_dir: Path) -> None:
    _script(harness, Response.tools(tool("write_file", {"path": "b.txt", "content": "x\n"},
                                         id="w1")), Response.text("I wrote b.txt."))
    checkpoints = Checkpointer(fresh_data_dir, harness.project)  # auto edits what is undoable
    await harness.session(checkpointer=checkpoints, data_dir=fresh_data_dir).run("go")
    assert (harness.project / "b.txt").read_text() == "x\n"
    assert "waiting for review" not in _text(_results(harness)["e1"])
    assert Worktrees(fresh_data_dir).all() == []
