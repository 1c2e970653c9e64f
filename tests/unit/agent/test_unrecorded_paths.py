"""What checkpoints do not record cannot be destroyed by a call that runs unasked.

Auto mode runs a call unasked when it is reversible: every path it can change is recorded by the
checkpoint before it. Ignored folders (``data/`` in .gitignore, the built-in ``.venv/`` and
``build/``) are not recorded, so such a call finds them read-only (the sandbox mounts them so);
it fails, the model is told which path and that the person must approve, and the same call asks
next time. A call whose checkpoint could not be taken asks instead of running unrecorded. These
tests drive the real AgentSession against the fake model; the proof is the files on disk.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from app.core.agent.checkpointing import Checkpointer
from app.core.agent.events import FilesChanged, ToolFinished
from app.core.checkpoints import CheckpointError
from app.core.permission_mode import PermissionMode
from tests.fakes.anthropic_server import Response, tool
from tests.sandbox_support import requires_sandbox
from tests.unit.agent.helpers import Harness

pytestmark = requires_sandbox

VALUABLE = b"results of a week of computing\n"


@pytest.fixture
def project(project_outside_tmp: Path) -> Path:
    return project_outside_tmp


def make_project(root: Path) -> None:
    (root / ".gitignore").write_text("data/\n*.log\n")
    (root / "src.py").write_text("print('hi')\n")
    (root / "data").mkdir()
    (root / "data" / "valuable.csv").write_bytes(VALUABLE)
    (root / ".venv").mkdir()
    (root / ".venv" / "x").write_text("an installed package\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("object\n")


def auto_shell(harness: Harness) -> None:
    harness.update_profile(permission_mode=PermissionMode.AUTO)
    harness.enable("shell_exec", allowed_commands=["rm", "mkdir", "sh", "echo", "touch"],
                   allowed_write_dirs=["."])


async def test_an_unasked_rm_cannot_delete_ignored_data(harness: Harness,
                                                         fresh_data_dir: Path) -> None:
    project = harness.project
    make_project(project)
    auto_shell(harness)
    command = {"command": "rm -rf build data .venv"}
    harness.server.script(
        Response.tools(tool("shell_exec", command, id="toolu_1")),
        Response.tools(tool("shell_exec", command, id="toolu_2")),
        Response.text("Done."))
    # no answers queued: any approval request fails the approver, which declines
    checkpointer = Checkpointer(fresh_data_dir, project)
    await harness.session(checkpointer=checkpointer).run("clean up")

    assert (project / "data" / "valuable.csv").read_bytes() == VALUABLE
    assert (project / ".venv" / "x").exists()
    assert (project / "build" / "out.o").exists()
    first = harness.of(ToolFinished)[0]
    assert "read-only to this call" in first.content, first.content
    assert "data" in first.content.split("[Tebiki]")[1]
    # the same call again: not reversible any more, so the person was asked (and declined)
    assert [r.tool_use_id for r in harness.approver.requests] == ["toolu_2"]
    changes = harness.of(FilesChanged)[0].changes
    assert changes.removed_unrecorded == ()


async def test_a_file_tool_write_into_an_ignored_folder_asks_or_is_refused(
        harness: Harness, fresh_data_dir: Path) -> None:
    project = harness.project
    make_project(project)
    harness.update_profile(permission_mode=PermissionMode.AUTO)
    harness.enable("write_file", allowed_write_dirs=["."])
    edit = {"path": "data/valuable.csv", "content": "overwritten\n"}
    harness.server.script(
        Response.tools(tool("write_file", {"path": "new.txt", "content": "x\n"}, id="t1")),
        Response.tools(tool("write_file", edit, id="t2")),
        Response.text("Done."))
    checkpointer = Checkpointer(fresh_data_dir, project)
    await harness.session(checkpointer=checkpointer).run("write")

    assert (project / "new.txt").read_text() == "x\n"  # recorded: ran unasked
    assert (project / "data" / "valuable.csv").read_bytes() == VALUABLE
    assert [r.tool_use_id for r in harness.approver.requests] == ["t2"]  # asked, declined


async def test_undo_deletes_ignored_files_the_call_created(harness: Harness,
                                                           fresh_data_dir: Path) -> None:
    project = harness.project
    make_project(project)
    auto_shell(harness)
    harness.server.script(
        Response.tools(tool("shell_exec", {
            "command": "mkdir -p dist/pkg && touch dist/pkg/a.whl run.log src2.py"},
            id="toolu_1")),
        Response.text("Done."))
    checkpointer = Checkpointer(fresh_data_dir, project)
    await harness.session(checkpointer=checkpointer).run("build")
    assert harness.approver.requests == []
    assert not harness.of(ToolFinished)[0].is_error, harness.of(ToolFinished)[0].content
    assert (project / "dist" / "pkg" / "a.whl").exists() and (project / "run.log").exists()
    changes = harness.of(FilesChanged)[0].changes
    assert changes.created_unrecorded == ("dist/", "run.log")

    plan = await checkpointer.plan_undo([changes])
    assert plan.created_unrecorded == ("dist", "run.log")
    undo = await checkpointer.apply(plan, [changes])
    assert undo.result.ok, undo.result.errors
    assert not (project / "dist").exists() and not (project / "run.log").exists()
    assert not (project / "src2.py").exists()
    assert (project / "data" / "valuable.csv").read_bytes() == VALUABLE
    assert (project / "build" / "out.o").exists()


async def test_no_checkpoint_before_means_the_person_decides(
        harness: Harness, fresh_data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = harness.project
    (project / "a.txt").write_text("keep me\n")
    auto_shell(harness)
    checkpointer = Checkpointer(fresh_data_dir, project)

    def broken(label: str) -> None:
        raise CheckpointError("disk full")

    monkeypatch.setattr(checkpointer.store, "snapshot", broken)
    harness.server.script(
        Response.tools(tool("shell_exec", {"command": "rm a.txt"}, id="toolu_1")),
        Response.text("Done."))
    await harness.session(checkpointer=checkpointer).run("remove it")

    assert (project / "a.txt").read_text() == "keep me\n"
    assert [r.tool_use_id for r in harness.approver.requests] == ["toolu_1"]
    assert "checkpoint before this call" in harness.approver.requests[0].decision.decided_by


async def test_a_fifo_gitignore_neither_hangs_checkpoints_nor_unprotects(
        harness: Harness, fresh_data_dir: Path) -> None:
    project = harness.project
    make_project(project)
    (project / "nested").mkdir()
    (project / "nested" / "keep.txt").write_text("nested\n")
    os.mkfifo(project / "nested" / ".gitignore")
    os.mkfifo(project / "nested" / ".gitattributes")
    (project / ".gitignore").unlink()
    os.mkfifo(project / ".gitignore")
    auto_shell(harness)
    harness.server.script(
        Response.tools(tool("shell_exec", {"command": "rm nested/keep.txt"}, id="toolu_1")),
        Response.text("Done."))
    checkpointer = Checkpointer(fresh_data_dir, project)
    await harness.session(checkpointer=checkpointer).run("edit")

    assert harness.approver.requests == []
    changes = harness.of(FilesChanged)[0].changes  # both checkpoints were taken
    assert [c.path for c in changes.changes] == ["nested/keep.txt"]
    assert {".gitignore", "nested/.gitignore", "nested/.gitattributes"} <= set(
        changes.before.skipped)
    assert not (project / "nested" / "keep.txt").exists()
    plan = await checkpointer.plan_undo([changes])
    await checkpointer.apply(plan, [changes])
    assert (project / "nested" / "keep.txt").read_text() == "nested\n"
    assert (project / ".venv" / "x").exists()  # still excluded by the built-in rules


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def repository_state(root: Path) -> tuple[str, str, str, bytes]:
    return (git(root, "symbolic-ref", "HEAD"), git(root, "rev-parse", "HEAD"),
            git(root, "for-each-ref", "--format=%(refname) %(objectname)"),
            (root / ".git" / "index").read_bytes())


async def test_git_ops_writes_run_unasked_and_undo_puts_head_index_and_branches_back(
        harness: Harness, fresh_data_dir: Path) -> None:
    project = harness.project
    (project / "a.txt").write_text("a\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "a.txt")
    git(project, "-c", "user.email=t@e", "-c", "user.name=T", "commit", "-qm", "first")
    git(project, "tag", "v1")
    (project / "b.txt").write_text("b\n")
    before = repository_state(project)
    harness.update_profile(permission_mode=PermissionMode.AUTO)
    harness.enable("git_ops", git_permission="read_write")
    harness.server.script(
        Response.tools(tool("git_ops", {"action": "add", "args": {"files": ["b.txt"]}},
                            id="t1")),
        Response.tools(tool("git_ops", {"action": "commit", "args": {"message": "add b"}},
                            id="t2")),
        Response.tools(tool("git_ops", {"action": "branch_create",
                                        "args": {"branch_name": "topic"}}, id="t3")),
        Response.text("Done."))
    checkpointer = Checkpointer(fresh_data_dir, project)
    await harness.session(checkpointer=checkpointer).run("commit b on a branch")

    assert harness.approver.requests == []  # auto mode: contained and reversible
    assert all(not f.is_error for f in harness.of(ToolFinished)), harness.of(ToolFinished)
    assert git(project, "symbolic-ref", "HEAD") == "refs/heads/topic"
    assert git(project, "log", "--format=%s", "-1") == "add b"
    calls = [e.changes for e in harness.of(FilesChanged)]
    assert len(calls) == 3

    plan = await checkpointer.plan_undo(calls)
    assert plan.repository == "restore"
    undo = await checkpointer.apply(plan, calls)
    assert undo.result.ok, undo.result.errors
    assert repository_state(project) == before  # HEAD, branches, tags and index as before
    assert git(project, "status", "--porcelain") == "?? b.txt"
    assert (project / "b.txt").read_text() == "b\n"

    redo = await checkpointer.plan_redo(undo)
    await checkpointer.apply(redo, undo.calls)
    assert git(project, "symbolic-ref", "HEAD") == "refs/heads/topic"
    assert git(project, "log", "--format=%s", "-1") == "add b"


# -- background jobs ------------------------------------------------------------------------

def jobs_of(session) -> dict:
    from app.core.tools.shell.jobs import SESSION_JOBS

    return session.tool_session.get(SESSION_JOBS, {})


async def test_a_background_jobs_changes_go_to_the_next_checkpoint(
        harness: Harness, fresh_data_dir: Path) -> None:
    project = harness.project
    auto_shell(harness)
    harness.enable("shell_jobs")
    wait_for_job = {"action": "output", "job_id": "set once started", "wait_seconds": 60}
    harness.server.script(
        Response.tools(tool("shell_exec", {"command": "touch by-job.txt", "background": True},
                            id="t1")),
        Response.tools(tool("shell_jobs", wait_for_job, id="t2")),
        Response.tools(tool("shell_exec", {"command": "touch by-call.txt"}, id="t3")),
        Response.text("Done."))
    checkpointer = Checkpointer(fresh_data_dir, project)
    session = harness.session(checkpointer=checkpointer)

    def on_event(event: object) -> None:
        if isinstance(event, ToolFinished) and event.tool_use_id == "t1":
            (job_id,) = jobs_of(session)  # known once it started
            wait_for_job["job_id"] = job_id  # read when the model is next asked
        if isinstance(event, FilesChanged) and event.tool_use_id == "t1":
            # The job writes after the starting call's checkpoint, before the next call's:
            # the window a change could fall through (the loop is held here, not the job).
            deadline = time.monotonic() + 30
            while not (project / "by-job.txt").exists() and time.monotonic() < deadline:
                time.sleep(0.005)

    harness.on_event_hook = on_event
    await session.run("go")

    assert (project / "by-job.txt").exists()
    calls = [e.changes for e in harness.of(FilesChanged)]
    assert [c.tool_use_id for c in calls] == ["t1", "t2", "t3"]
    assert [c.path for c in calls[0].changes] == []
    assert [c.path for c in calls[1].changes] == ["by-job.txt"]  # the next checkpoint's
    assert [c.path for c in calls[2].changes] == ["by-call.txt"]
    plan = await checkpointer.plan_undo(calls)
    await checkpointer.apply(plan, calls)
    assert not (project / "by-job.txt").exists() and not (project / "by-call.txt").exists()


async def test_closing_the_conversation_or_undoing_stops_its_background_jobs(
        harness: Harness, fresh_data_dir: Path) -> None:
    project = harness.project
    (project / "a.txt").write_text("a\n")
    auto_shell(harness)
    harness.enable("shell_exec", allowed_commands=["sleep", "rm"])
    harness.server.script(
        Response.tools(tool("shell_exec", {"command": "sleep 600", "background": True},
                            id="t1")),
        Response.tools(tool("shell_exec", {"command": "rm a.txt"}, id="t2")),
        Response.text("Started."),
        Response.tools(tool("shell_exec", {"command": "sleep 600", "background": True},
                            id="t3")),
        Response.text("Started again."))
    checkpointer = Checkpointer(fresh_data_dir, project)
    session = harness.session(checkpointer=checkpointer)
    await session.run("start a server")
    (first,) = [j for j in jobs_of(session).values()]
    assert first.running

    changes = [e.changes for e in harness.of(FilesChanged) if e.tool_use_id == "t2"]
    plan = await checkpointer.plan_undo(changes)
    record = await checkpointer.apply(plan, changes)
    assert record.stopped_jobs == (first.id,) and not first.running
    assert (project / "a.txt").read_text() == "a\n"

    await session.run("start it again")
    second = next(j for j in jobs_of(session).values() if j is not first)
    assert second.running
    await session.aclose()
    assert not second.running and second.stopped
    assert session._stop_jobs not in checkpointer.job_stoppers
