"""The project's own .git is never touched, the person's edits win, nothing is written outside."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from app.core.checkpoints import CheckpointStore
from app.core.checkpoints.restore import ProjectWriter, UnsafePathError

from .conftest import git


def dot_git_hashes(root: Path) -> dict[str, str]:
    out = {}
    for folder, _dirs, files in os.walk(root / ".git"):
        for name in files:
            path = Path(folder, name)
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            out[path.relative_to(root).as_posix()] = hashlib.sha256(data).hexdigest()
    return out


def test_project_git_is_untouched_and_staged_work_survives(store: CheckpointStore,
                                                           project: Path):
    git(project, "init", "-q")
    (project / "committed.txt").write_text("v1\n")
    (project / "staged.txt").write_text("v1\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "first")
    (project / "staged.txt").write_text("staged change\n")
    git(project, "add", "staged.txt")
    (project / "committed.txt").write_text("unstaged change\n")
    git(project, "status", "--porcelain")  # lets the project's index settle its stat cache
    status_before = git(project, "status", "--porcelain=v1")
    diff_cached = git(project, "diff", "--cached")
    hashes = dot_git_hashes(project)
    assert any(p.startswith(".git/objects/") for p in hashes)

    checkpoints = [store.snapshot("start")]
    for n in range(4):
        (project / f"agent{n}.txt").write_text(f"{n}\n")
        (project / "committed.txt").write_text(f"agent edit {n}\n")
        checkpoints.append(store.snapshot(f"call {n}"))
    for older, newer in zip(checkpoints[-2::-1], checkpoints[:0:-1], strict=True):
        result = store.restore(store.plan_restore(older, newer))
        assert result.ok and not result.kept
    assert dot_git_hashes(project) == hashes
    assert (project / "committed.txt").read_text() == "unstaged change\n"
    assert git(project, "status", "--porcelain=v1") == status_before
    assert git(project, "diff", "--cached") == diff_cached
    assert all(".git" not in c.path.split("/") for c in
               store.changes(checkpoints[0], checkpoints[-1]))


def test_conflict_keeps_the_persons_version_unless_taken(store: CheckpointStore,
                                                         project: Path):
    (project / "f.txt").write_text("original\n")
    (project / "g.txt").write_text("g original\n")
    before = store.snapshot()
    (project / "f.txt").write_text("agent\n")
    (project / "g.txt").write_text("g agent\n")
    after = store.snapshot()
    (project / "f.txt").write_text("person edited after the agent\n")

    plan = store.plan_restore(before, after, ["f.txt", "g.txt"])
    assert plan.conflicts == ("f.txt",)
    conflict = next(a for a in plan.actions if a.path == "f.txt")
    assert store.read_blob(conflict.expected_blob or "") == b"agent\n"
    assert store.read_blob(conflict.target_blob or "") == b"original\n"
    result = store.restore(plan)
    assert result.kept == ["f.txt"] and result.written == ["g.txt"]
    assert (project / "f.txt").read_text() == "person edited after the agent\n"
    assert (project / "g.txt").read_text() == "g original\n"

    result = store.restore(plan, {"f.txt": "keep"})
    assert (project / "f.txt").read_text() == "person edited after the agent\n"
    result = store.restore(plan, {"f.txt": "take"})
    assert result.written == ["f.txt"]
    assert (project / "f.txt").read_text() == "original\n"


def test_edit_between_plan_and_restore_is_a_conflict(store: CheckpointStore, project: Path):
    (project / "f.txt").write_text("original\n")
    before = store.snapshot()
    (project / "f.txt").write_text("agent\n")
    after = store.snapshot()
    plan = store.plan_restore(before, after)
    assert plan.conflicts == ()
    (project / "f.txt").write_text("person, while the plan was shown\n")
    result = store.restore(plan)
    assert result.kept == ["f.txt"]
    assert (project / "f.txt").read_text() == "person, while the plan was shown\n"


def test_symlink_pointing_outside_is_restored_as_a_link(tmp_path: Path, store: CheckpointStore,
                                                        project: Path):
    outside = tmp_path / "outside.txt"
    outside.write_text("outside, never written\n")
    os.symlink(outside, project / "out_link")
    before = store.snapshot()
    (project / "out_link").unlink()
    (project / "out_link").write_text("now a file\n")
    after = store.snapshot()
    assert store.restore(store.plan_restore(before, after)).ok
    assert os.readlink(project / "out_link") == str(outside)
    assert outside.read_text() == "outside, never written\n"

    # restoring a plain file where a symlink to outside now is replaces the link, not its target
    before_file = after
    (project / "out_link").unlink()
    os.symlink(outside, project / "out_link")
    with_link = store.snapshot()
    result = store.restore(store.plan_restore(before_file, with_link))
    assert result.ok
    assert not (project / "out_link").is_symlink()
    assert outside.read_text() == "outside, never written\n"


def test_restore_refuses_to_write_through_a_symlinked_folder(tmp_path: Path,
                                                            store: CheckpointStore,
                                                            project: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "sub").mkdir()
    (project / "sub" / "a.txt").write_text("inside\n")
    before = store.snapshot()
    (project / "sub" / "a.txt").unlink()  # the agent deletes the file
    after = store.snapshot()
    (project / "sub").rmdir()
    os.symlink(outside, project / "sub")  # then the person makes the folder a link outside
    plan = store.plan_restore(before, after)
    assert plan.conflicts == ("sub",)
    result = store.restore(plan, {"sub/a.txt": "take"})
    assert result.kept == ["sub"]
    assert "sub/a.txt" in result.errors  # refused: its folder is a symlink
    assert list(outside.iterdir()) == []
    assert os.readlink(project / "sub") == str(outside)

    # the low-level writer refuses too, whatever the caller passes
    writer = ProjectWriter(project)
    with pytest.raises(UnsafePathError):
        writer.write_file("sub/a.txt", b"x", False)
    for bad in ("../escape.txt", "/etc/passwd", ".git/config", "a/.GIT/x", "a//b", ""):
        with pytest.raises(UnsafePathError):
            writer.write_file(bad, b"x", False)
    assert list(outside.iterdir()) == []
    assert not (tmp_path / "escape.txt").exists()


def test_restore_never_writes_into_a_nested_repository(project: Path):
    nested = project / "vendor"
    nested.mkdir()
    git(nested, "init", "-q")
    writer = ProjectWriter(project)
    with pytest.raises(UnsafePathError):
        writer.write_file("vendor/x.txt", b"x", False)
    assert not (nested / "x.txt").exists()
