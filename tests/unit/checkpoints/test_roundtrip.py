"""Snapshots and restores bring a project folder back byte for byte."""

from __future__ import annotations

import os
from pathlib import Path

from app.core.checkpoints import CheckpointStore

from .conftest import fingerprint, git


def populate(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print('hello')\n")
    (root / "src" / "util.py").write_text("def f():\n    return 1\n")
    (root / "docs").mkdir()
    (root / "docs" / "readme.md").write_bytes(b"line one\r\nline two\r\n")  # CRLF kept
    (root / "data.bin").write_bytes(bytes(range(256)) * 40 + b"\0\xff")
    (root / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "to_be_link.txt").write_text("plain file that becomes a symlink\n")
    os.chmod(root / "tool.sh", 0o755)
    os.symlink("src/main.py", root / "main_link")


def shell_like_edits(root: Path) -> None:
    (root / "src" / "util.py").unlink()
    os.rename(root / "src" / "main.py", root / "src" / "app.py")
    os.chmod(root / "docs" / "readme.md", 0o755)
    (root / "data.bin").write_bytes(os.urandom(5000))
    (root / "to_be_link.txt").unlink()
    os.symlink("docs/readme.md", root / "to_be_link.txt")
    os.symlink("../elsewhere", root / "new_link")
    (root / "new_dir" / "deep").mkdir(parents=True)
    (root / "new_dir" / "deep" / "x.txt").write_text("new\n")


def test_shell_sequence_then_restore_is_byte_identical(store: CheckpointStore, project: Path):
    populate(project)
    original = fingerprint(project)
    before = store.snapshot("before call")
    shell_like_edits(project)
    after = store.snapshot("after call")
    assert fingerprint(project) != original

    changed = [c.path for c in store.changes(before, after)] + [
        c.old_path for c in store.changes(before, after) if c.old_path]
    plan = store.plan_restore(before, after, changed)
    assert plan.conflicts == ()
    result = store.restore(plan)
    assert result.ok, result.errors
    assert fingerprint(project) == original  # bytes, mode bits, link targets, no extra dirs


def test_changes_report_each_kind(store: CheckpointStore, project: Path):
    populate(project)
    before = store.snapshot()
    (project / "src" / "util.py").unlink()
    os.rename(project / "src" / "main.py", project / "src" / "app.py")
    os.chmod(project / "tool.sh", 0o644)
    (project / "data.bin").write_bytes(b"\0\1\2" * 100)
    (project / "to_be_link.txt").unlink()
    os.symlink("tool.sh", project / "to_be_link.txt")
    (project / "added.txt").write_text("new\n")
    after = store.snapshot()
    kinds = {c.path: (c.kind, c.old_path, c.binary) for c in store.changes(before, after)}
    assert kinds == {
        "src/util.py": ("deleted", None, False),
        "src/app.py": ("renamed", "src/main.py", False),
        "tool.sh": ("mode", None, False),
        "data.bin": ("modified", None, True),
        "to_be_link.txt": ("type", None, False),
        "added.txt": ("added", None, False),
    }
    diff = store.diff_text(before, after)
    assert "Binary files a/data.bin and b/data.bin differ" in diff
    assert "+new" in diff
    only = store.diff_text(before, after, paths=["added.txt"])
    assert "added.txt" in only and "data.bin" not in only
    capped = store.diff_text(before, after, max_bytes=50)
    assert capped.endswith("(diff truncated)\n")


def test_undo_then_redo(store: CheckpointStore, project: Path):
    (project / "a.txt").write_text("v1\n")
    before = store.snapshot()
    (project / "a.txt").write_text("v2 by the agent\n")
    (project / "b.txt").write_text("created by the agent\n")
    after = store.snapshot()
    paths = [c.path for c in store.changes(before, after)]

    undone = store.restore(store.plan_restore(before, after, paths))
    assert undone.ok
    assert (project / "a.txt").read_text() == "v1\n"
    assert not (project / "b.txt").exists()

    assert store.changes(undone.after, before) == []
    assert store.changes(undone.before, after) == []
    redo_plan = store.plan_restore(after, undone.after)
    assert redo_plan.conflicts == ()
    assert {a.path for a in redo_plan.actions} == {"a.txt", "b.txt"}
    assert "+v2 by the agent" in redo_plan.preview_diff
    redone = store.restore(redo_plan)
    assert redone.ok
    assert (project / "a.txt").read_text() == "v2 by the agent\n"
    assert (project / "b.txt").read_text() == "created by the agent\n"


def test_non_git_project_and_checkpoint_lookup(store: CheckpointStore, project: Path):
    assert not (project / ".git").exists()
    (project / "f.txt").write_text("x\n")
    first = store.snapshot("first label")
    assert store.checkpoint(first.id) == first
    (project / "f.txt").write_text("y\n")
    second = store.snapshot("second")
    assert [cp.id for cp in store.checkpoints()] == [first.id, second.id]
    assert store.shadow_dir.is_dir()
    assert store.shadow_dir.parent.name == "checkpoints"
    assert not (project / ".git").exists()


def test_same_project_path_same_shadow(tmp_path: Path, project: Path):
    a = CheckpointStore(tmp_path / "data", project)
    b = CheckpointStore(tmp_path / "data", project / "sub" / "..")
    other = tmp_path / "other"
    other.mkdir()
    c = CheckpointStore(tmp_path / "data", other)
    assert a.shadow_dir == b.shadow_dir != c.shadow_dir


def test_file_over_the_size_cap_is_skipped_and_left_alone(tmp_path: Path, project: Path):
    store = CheckpointStore(tmp_path / "data", project, max_file_bytes=1000)
    (project / "small.txt").write_text("small\n")
    (project / "big.bin").write_bytes(b"x" * 1001)
    (project / "exact.bin").write_bytes(b"y" * 1000)
    first = store.snapshot()
    assert first.skipped == ("big.bin",)
    (project / "exact.bin").write_bytes(b"y" * 2000)  # grows past the cap: no longer covered
    (project / "big.bin").write_bytes(b"z" * 10)  # shrinks under it: covered again
    second = store.snapshot()
    assert second.skipped == ("exact.bin",)
    plan = store.plan_restore(first, second)
    assert "big.bin" in plan.not_restorable  # first did not store it: nothing to go back to
    assert "big.bin" not in {a.path for a in plan.actions}
    assert "exact.bin" in plan.conflicts  # on disk, not covered now: never overwritten blindly
    store.restore(plan)
    assert (project / "exact.bin").read_bytes() == b"y" * 2000
    assert (project / "big.bin").read_bytes() == b"z" * 10


def test_ignored_and_excluded_files_are_not_captured_nor_deleted(tmp_path: Path, project: Path):
    store = CheckpointStore(tmp_path / "data", project, extra_excludes=["*.secret"])
    (project / ".gitignore").write_text("*.log\n")
    (project / "pkg").mkdir()
    (project / "pkg" / ".gitignore").write_text("generated/\n")
    (project / "keep.txt").write_text("k\n")
    before = store.snapshot()
    (project / "run.log").write_text("log\n")
    (project / "pkg" / "generated").mkdir()
    (project / "pkg" / "generated" / "out.py").write_text("gen\n")
    for excluded in ("node_modules/x/index.js", ".venv/lib/site.py", "__pycache__/m.pyc",
                     "build/out.o", "api.secret"):
        (project / excluded).parent.mkdir(parents=True, exist_ok=True)
        (project / excluded).write_text("excluded\n")
    (project / "keep.txt").write_text("changed\n")
    after = store.snapshot()
    assert [c.path for c in store.changes(before, after)] == ["keep.txt"]
    result = store.restore(store.plan_restore(before, after))
    assert result.ok
    assert (project / "keep.txt").read_text() == "k\n"
    for survivor in ("run.log", "pkg/generated/out.py", "node_modules/x/index.js",
                     ".venv/lib/site.py", "__pycache__/m.pyc", "build/out.o", "api.secret"):
        assert (project / survivor).exists(), survivor


def test_project_gitattributes_do_not_convert_bytes(store: CheckpointStore, project: Path):
    (project / ".gitattributes").write_text(
        "* text eol=crlf\n*.txt working-tree-encoding=UTF-16 filter=evil ident\n")
    (project / "a.txt").write_bytes(b"lf only\n$Id$\n")
    (project / "b.dat").write_bytes(b"mixed\r\nendings\n")
    original = fingerprint(project)
    before = store.snapshot()
    (project / "a.txt").write_bytes(b"other\n")
    (project / "b.dat").unlink()
    after = store.snapshot()
    assert store.restore(store.plan_restore(before, after)).ok
    assert fingerprint(project) == original


def test_nested_repository_is_reported_not_covered(store: CheckpointStore, project: Path):
    nested = project / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "inside.txt").write_text("in a nested repository\n")
    (project / "top.txt").write_text("top\n")
    first = store.snapshot()
    assert first.skipped == ("vendor/lib/",)
    (nested / "inside.txt").write_text("changed\n")
    (project / "top.txt").write_text("changed\n")
    second = store.snapshot()
    assert [c.path for c in store.changes(first, second)] == ["top.txt"]
    assert store.restore(store.plan_restore(first, second)).ok
    assert (nested / "inside.txt").read_text() == "changed\n"
    assert (project / "top.txt").read_text() == "top\n"


def test_parallel_first_snapshot_builds_a_valid_index(store: CheckpointStore, project: Path,
                                                      monkeypatch):
    import app.core.checkpoints.snapshot as snapshot_module

    monkeypatch.setattr(snapshot_module, "_PARALLEL_MIN_PATHS", 10)
    monkeypatch.setattr(snapshot_module.os, "cpu_count", lambda: 3)
    calls: list[int] = []
    real_add = store._repo.add_to_empty_index

    def add(paths: list[bytes], workers: int, **kwargs: int) -> list[bytes]:
        calls.append(workers)
        return real_add(paths, workers, **kwargs)

    monkeypatch.setattr(store._repo, "add_to_empty_index", add)
    for n in range(40):
        folder = project / f"d{n % 4}"
        folder.mkdir(exist_ok=True)
        (folder / f"{'x' * (n * 3)}{n}.txt").write_text(f"{n}\n")  # long names: padding
    (project / "d0" / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(project / "d0" / "run.sh", 0o755)
    os.symlink("d1", project / "link")
    original = fingerprint(project)
    first = store.snapshot()
    assert calls == [3]
    assert not list(store.shadow_dir.glob("index.part*"))
    assert not list((store.shadow_dir / "objects" / "pack").glob("tmp_*"))
    assert store._repo.changed_paths() == []  # stat data came along: nothing re-hashed
    assert len(store._repo.tree_entries(first.id)) == 42
    (project / "d2" / "2.txt").write_text("changed\n")
    second = store.snapshot()
    assert [c.path for c in store.changes(first, second)] == ["d2/2.txt"]
    assert store.restore(store.plan_restore(first, second)).ok
    assert fingerprint(project) == original
