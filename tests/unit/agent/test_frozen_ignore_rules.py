"""A run's checkpoints keep the ignore rules the run started with.

A call that edits ``.gitignore`` must not change what the next calls' checkpoints record: a
file the run "ignores" half-way is still recorded (its rewrite is undone), and a data folder the
run "un-ignores" stays unrecorded (read-only to unasked calls, never deleted by undo as if the
run had made it). A FIFO ``.gitignore`` a call makes counts as absent and stops no later
checkpoint; where it does stop one (no bubblewrap to hide it from git), the next call is not
"reversible" and asks. These tests drive the real AgentSession in auto mode against the fake model;
the proof is the files on disk after the app's own undo.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.agent.checkpointing import Checkpointer
from app.core.agent.events import FilesChanged, ToolFinished
from app.core.permission_mode import PermissionMode
from tests.fakes.anthropic_server import Response, tool
from tests.sandbox_support import requires_sandbox
from tests.unit.agent.helpers import Harness

pytestmark = requires_sandbox

NOTES = b"the person's notes, recorded by every checkpoint\n"
DATA = b"gitignored results of a week of computing\n"


@pytest.fixture
def project(project_outside_tmp: Path) -> Path:
    return project_outside_tmp


def run_unasked(harness: Harness, *commands: str) -> None:
    harness.update_profile(permission_mode=PermissionMode.AUTO)
    harness.enable("shell_exec", allowed_commands=["rm", "sh", "echo"],
                   allowed_write_dirs=["."])
    harness.server.script(
        *(Response.tools(tool("shell_exec", {"command": c}, id=f"t{n}"))
          for n, c in enumerate(commands, 1)),
        Response.text("Done."))


def with_ignored_data(project: Path) -> Path:
    (project / ".gitignore").write_text("data/\n")
    (project / "data").mkdir()
    (project / "data" / "results.csv").write_bytes(DATA)
    return project


async def test_a_file_the_run_ignores_half_way_is_still_restored_by_undo(
        harness: Harness, fresh_data_dir: Path) -> None:
    project = harness.project
    (project / ".gitignore").write_text("*.log\n")
    (project / "notes.txt").write_bytes(NOTES)
    run_unasked(harness, "rm notes.txt",
                "sh -c 'echo notes.txt >> .gitignore && echo garbage > notes.txt'")
    checkpointer = Checkpointer(fresh_data_dir, project)
    await harness.session(checkpointer=checkpointer).run("tidy up")
    assert harness.approver.requests == []
    assert all(not f.is_error for f in harness.of(ToolFinished)), harness.of(ToolFinished)
    calls = [e.changes for e in harness.of(FilesChanged)]
    assert "notes.txt" in calls[1].paths  # the rewrite is recorded, not "ignored"

    plan = await checkpointer.plan_undo(calls)
    undo = await checkpointer.apply(plan, calls)
    assert undo.result.ok, undo.result.errors
    assert (project / "notes.txt").read_bytes() == NOTES
    assert (project / ".gitignore").read_text() == "*.log\n"


async def test_a_folder_the_run_un_ignores_stays_unrecorded_and_survives_undo(
        harness: Harness, fresh_data_dir: Path) -> None:
    project = with_ignored_data(harness.project)
    run_unasked(harness, "sh -c 'echo \"# nothing ignored\" > .gitignore'", "rm -rf data")
    checkpointer = Checkpointer(fresh_data_dir, project)
    await harness.session(checkpointer=checkpointer).run("clean up")
    # still unrecorded for this run, so still read-only to its unasked calls
    assert (project / "data" / "results.csv").read_bytes() == DATA
    assert "read-only to this call" in harness.of(ToolFinished)[1].content
    first = harness.of(FilesChanged)[0].changes
    assert first.paths == (".gitignore",)  # the data did not become "created by the run"

    plan = await checkpointer.plan_undo([first])
    undo = await checkpointer.apply(plan, [first])
    assert undo.result.ok, undo.result.errors
    assert (project / "data" / "results.csv").read_bytes() == DATA
    assert (project / ".gitignore").read_text() == "data/\n"


async def test_the_next_run_starts_from_the_rules_as_they_are_then(
        harness: Harness, fresh_data_dir: Path) -> None:
    project = harness.project
    (project / ".gitignore").write_text("*.log\n")
    run_unasked(harness, "sh -c 'echo out.txt >> .gitignore'")
    checkpointer = Checkpointer(fresh_data_dir, project)
    session = harness.session(checkpointer=checkpointer)
    await session.run("ignore out.txt")
    harness.server.script(
        Response.tools(tool("shell_exec", {"command": "sh -c 'echo x > out.txt'"}, id="t9")),
        Response.text("Done."))
    await session.run("write out.txt")
    last = harness.of(FilesChanged)[-1].changes
    assert last.paths == () and last.created_unrecorded == ("out.txt",)


async def test_a_fifo_gitignore_made_by_a_call_breaks_no_later_checkpoint(
        harness: Harness, fresh_data_dir: Path) -> None:
    project = with_ignored_data(harness.project)
    (project / "a.txt").write_text("one\n")
    run_unasked(harness, "sh -c 'rm .gitignore && mkfifo .gitignore'", "rm -rf data",
                "sh -c 'echo two > a.txt'")
    checkpointer = Checkpointer(fresh_data_dir, project)
    await harness.session(checkpointer=checkpointer).run("go")
    assert (project / "data" / "results.csv").read_bytes() == DATA  # still read-only
    calls = [e.changes for e in harness.of(FilesChanged)]
    assert len(calls) == 3 and calls[2].paths == ("a.txt",)  # every checkpoint was taken
    plan = await checkpointer.plan_undo(calls[2:])
    undo = await checkpointer.apply(plan, calls[2:])
    assert undo.result.ok, undo.result.errors
    assert (project / "a.txt").read_text() == "one\n"


async def test_when_a_fifo_gitignore_stops_checkpoints_the_next_call_asks(
        harness: Harness, fresh_data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.core.checkpoints.rule_files as rule_files

    project = harness.project
    (project / "a.txt").write_text("one\n")
    no_bubblewrap = rule_files.RuleFileGuard.wrapper

    def wrapper(guard: rule_files.RuleFileGuard, unsafe: list[bytes]) -> tuple[str, ...]:
        if unsafe:  # as where bubblewrap is missing: the checkpoint fails, never hangs
            raise rule_files.UnsafeRuleFile("no bubblewrap here")
        return no_bubblewrap(guard, unsafe)

    monkeypatch.setattr(rule_files.RuleFileGuard, "wrapper", wrapper)
    run_unasked(harness, "mkfifo .gitignore", "rm a.txt")
    harness.enable("shell_exec", allowed_commands=["rm", "mkfifo"], allowed_write_dirs=["."])
    checkpointer = Checkpointer(fresh_data_dir, project)
    await harness.session(checkpointer=checkpointer).run("go")
    assert [r.tool_use_id for r in harness.approver.requests] == ["t2"]  # not "reversible"
    assert (project / "a.txt").read_text() == "one\n"  # declined
