"""What a checkpoint does not record is listed, never lost silently: ignored entries, names git
refuses, rule files git would block on (which must not hang or break a checkpoint either)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from app.core.checkpoints import CheckpointStore

NEWLINE = "new\nline.txt"
NON_UTF8 = os.fsdecode(b"caf\xe9.txt")  # Latin-1 bytes, not UTF-8


def test_ignored_entries_are_listed_as_unrecorded(store: CheckpointStore, project: Path):
    (project / ".gitignore").write_text("data/\n*.log\n")
    (project / "data").mkdir()
    (project / "data" / "big.csv").write_text("rows\n")
    (project / "x.log").write_text("log\n")
    (project / "node_modules" / "pkg").mkdir(parents=True)
    (project / "node_modules" / "pkg" / "index.js").write_text("js\n")
    (project / "src.py").write_text("code\n")
    checkpoint = store.snapshot()
    assert checkpoint.ignored == ("data/", "node_modules/", "x.log")
    assert checkpoint.unrecorded == ("data/", "node_modules/", "x.log")
    assert store.checkpoint(checkpoint.id).ignored == checkpoint.ignored  # kept in the record


@pytest.mark.parametrize("where", [".gitignore", "sub/.gitignore", "sub/.gitattributes"])
def test_a_fifo_rule_file_counts_as_absent_and_never_hangs(store: CheckpointStore,
                                                            project: Path, where: str):
    if shutil.which("bwrap") is None:
        pytest.skip("hiding a FIFO from git needs bubblewrap")
    (project / "sub").mkdir()
    (project / "sub" / "a.txt").write_text("a\n")
    (project / "b.txt").write_text("b\n")
    first = store.snapshot()
    os.mkfifo(project / where)  # between snapshots: the cached folder listing must see it
    (project / "sub" / "a.txt").write_text("a2\n")
    second = store.snapshot()
    assert where in second.skipped
    assert [c.path for c in store.changes(first, second)] == ["sub/a.txt"]
    plan = store.plan_restore(first, second, ["sub/a.txt"])
    assert store.restore(plan).ok
    assert (project / "sub" / "a.txt").read_text() == "a\n"
    assert store.diff_text(first, second)  # diffs read attributes too


def test_odd_names_are_recorded_or_listed_never_lost(store: CheckpointStore, project: Path):
    (project / NEWLINE).write_text("n\n")
    (project / NON_UTF8).write_text("c\n")
    (project / "sub").mkdir()
    (project / "sub" / ".git").write_text("not a repository\n")
    (project / "sub" / "kept.txt").write_text("k\n")
    (project / ".GIT").write_text("G\n")
    (project / "git~1").write_text("short name\n")
    (project / "ok.txt").write_text("ok\n")
    (project / ".gitmodules").symlink_to("elsewhere")
    first = store.snapshot()
    assert set(first.skipped) == {"sub/.git", ".GIT", "git~1", ".gitmodules"}
    for name in (NEWLINE, NON_UTF8, "sub/kept.txt"):
        (project / name).unlink()
    second = store.snapshot()
    changed = {c.path: c.kind for c in store.changes(first, second)}
    assert changed == {NEWLINE: "deleted", NON_UTF8: "deleted", "sub/kept.txt": "deleted"}
    assert '"a/new\\nline.txt"' in store.diff_text(first, second)  # quoted, as git shows it
    result = store.restore(store.plan_restore(first, second, list(changed)))
    # restore never writes where a .git is on the way (a file or not), and says so
    assert result.errors == {"sub/kept.txt": "inside a nested repository"}
    assert (project / NEWLINE).read_text() == "n\n"
    assert (project / NON_UTF8).read_text() == "c\n"
    assert store.snapshot().skipped == first.skipped  # still listed, every time


def test_undo_removes_ignored_entries_the_calls_made_and_nothing_older(
        store: CheckpointStore, project: Path):
    (project / ".gitignore").write_text("*.log\nout/\n")
    (project / "old.log").write_text("the person's\n")
    before = store.snapshot()
    (project / "new.log").write_text("made by the call\n")
    (project / "out" / "deep").mkdir(parents=True)
    (project / "out" / "deep" / "x.bin").write_bytes(b"x")
    (project / "outside-link").symlink_to("/")
    after = store.snapshot()
    plan = store.plan_restore(before, after, ["outside-link"], remove_created_unrecorded=True)
    assert plan.created_unrecorded == ("new.log", "out")
    result = store.restore(plan)
    assert result.ok, result.errors
    assert not (project / "new.log").exists() and not (project / "out").exists()
    assert (project / "old.log").read_text() == "the person's\n"
    assert not (project / "outside-link").is_symlink()
    assert Path("/").is_dir()  # the deletion never followed the link


def test_a_git_commit_is_undone_by_restoring_head_refs_and_index(store: CheckpointStore,
                                                                  project: Path):
    from tests.unit.checkpoints.conftest import git

    (project / "a.txt").write_text("a\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "a.txt")
    git(project, "commit", "-qm", "first")
    (project / "b.txt").write_text("b\n")
    index = (project / ".git" / "index").read_bytes()
    head = git(project, "rev-parse", "HEAD")
    before = store.snapshot()
    git(project, "add", "b.txt")
    git(project, "commit", "-qm", "second")
    git(project, "switch", "-q", "-c", "topic")
    after = store.snapshot()
    assert after.repo is not None and after.repo != before.repo
    plan = store.plan_restore(before, after, [])
    assert plan.repository == "restore"
    assert store.restore(plan).ok
    assert git(project, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert git(project, "rev-parse", "HEAD") == head
    assert git(project, "branch", "--list").strip() == "* main"
    assert (project / ".git" / "index").read_bytes() == index
    store.prune(max_age_days=None, max_bytes=None)  # the recorded index survives a gc
    assert store.read_blob(before.repo.index) == index if before.repo and before.repo.index \
        else False


def test_ignoring_a_recorded_file_later_does_not_hide_its_changes(store: CheckpointStore,
                                                                   project: Path):
    (project / "notes.txt").write_text("v1\n")
    first = store.snapshot()
    (project / ".gitignore").write_text("notes.txt\n")  # an edit meant to hide the next one
    (project / "notes.txt").write_text("v2\n")
    second = store.snapshot()
    assert {c.path for c in store.changes(first, second)} == {".gitignore", "notes.txt"}
    assert "notes.txt" not in second.unrecorded


def test_undo_never_deletes_what_the_target_did_not_record(store: CheckpointStore,
                                                           project: Path):
    """Data ignored at the target (so not recorded) and recorded later, because the rules
    changed (another conversation, the person): restoring the target leaves it in place and
    says it could not be restored, instead of deleting it as if the calls had made it."""
    (project / ".gitignore").write_text("data/\n")
    (project / "data").mkdir()
    (project / "data" / "results.csv").write_text("a week of computing\n")
    target = store.snapshot("target")
    assert "data/" in target.ignored
    (project / ".gitignore").write_text("# nothing ignored\n")
    later = store.snapshot("rules changed")
    assert "data/results.csv" in {c.path for c in store.changes(target, later)}
    plan = store.plan_restore(target, later)
    assert "data/results.csv" in plan.not_restorable
    result = store.restore(plan)
    assert result.ok, result.errors
    assert (project / "data" / "results.csv").read_text() == "a week of computing\n"
    assert (project / ".gitignore").read_text() == "data/\n"
