"""The first snapshot written directly as one pack (pack_writer): valid for git, complete, and
never touching the project's own repository."""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
from pathlib import Path

import pytest

import app.core.checkpoints.pack_writer as pack_writer
import app.core.checkpoints.snapshot as snapshot_module
from app.core.checkpoints import CheckpointStore
from app.core.checkpoints.shadow_repo import RECOMPRESS_MARKER

from .conftest import GIT_ENV, fingerprint, git


@pytest.fixture
def parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    """First snapshots of more than a few files take the direct (pack) path."""
    monkeypatch.setattr(snapshot_module, "_PARALLEL_MIN_PATHS", 5)
    monkeypatch.setattr(snapshot_module.os, "cpu_count", lambda: 2)


def shadow_git(store: CheckpointStore, *args: str) -> str:
    env = {**GIT_ENV, "GIT_DIR": str(store.shadow_dir)}
    return subprocess.run(["git", *args], env=env, check=True, capture_output=True,
                          stdin=subprocess.DEVNULL).stdout.decode()


def make_tree(project: Path) -> None:
    for n in range(30):
        folder = project / f"d{n % 3}" / f"sub{n % 2}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}.txt").write_text(f"file {n}\n")
    (project / "same1.txt").write_text("duplicate content\n")
    (project / "same2.txt").write_text("duplicate content\n")
    (project / "empty").write_bytes(b"")
    (project / "big.bin").write_bytes(os.urandom(3 * 65535 + 17))  # several stored blocks
    (project / "a.b").write_text("sorts before the folder a/ in the index, after it in trees\n")
    (project / "a").mkdir()
    (project / "a" / "inner").write_text("inner\n")
    (project / "a-b").write_text("dash\n")
    (project / "tool.sh").write_text("#!/bin/sh\n")
    os.chmod(project / "tool.sh", 0o755)
    os.symlink("d0/sub0", project / "link")
    os.symlink("missing-target", project / "dangling")


def git_tree_listing(root: Path) -> str:
    """What plain git makes of the folder: ``ls-tree -r`` of a fresh repository's tree."""
    git(root, "init", "-q")
    git(root, "-c", "core.autocrlf=false", "add", "-A")
    tree = git(root, "write-tree").strip()
    return git(root, "ls-tree", "-r", "--full-tree", tree)


def test_first_snapshot_pack_is_what_git_would_store(store: CheckpointStore, project: Path,
                                                     tmp_path: Path, parallel: None):
    make_tree(project)
    original = fingerprint(project)
    first = store.snapshot()
    packs = list((store.shadow_dir / "objects" / "pack").glob("*.pack"))
    assert len(packs) == 1
    shadow_git(store, "fsck", "--strict", "--no-dangling")
    shadow_git(store, "verify-pack", str(packs[0].with_suffix(".idx")))
    # the trees were in the pack already: write-tree wrote no object, only the commit is loose
    loose = [p for p in (store.shadow_dir / "objects").rglob("*")
             if p.is_file() and "pack" not in p.parts and "info" not in p.parts]
    assert len(loose) == 1
    # identical to what git itself stores for the same files
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(project), str(copy)], check=True)
    assert shadow_git(store, "ls-tree", "-r", "--full-tree", first.id) == \
        git_tree_listing(copy)
    assert store._repo.changed_paths() == []  # stat data is in the index
    assert fingerprint(project) == original
    (project / "big.bin").write_bytes(b"changed")
    second = store.snapshot()
    assert [c.path for c in store.changes(first, second)] == ["big.bin"]
    assert store.restore(store.plan_restore(first, second)).ok
    assert fingerprint(project) == original


def test_project_git_repository_is_untouched(store: CheckpointStore, project: Path,
                                             parallel: None):
    make_tree(project)
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "project's own")
    (project / "d0" / "sub0" / "f0.txt").write_text("uncommitted change\n")
    (project / "new.txt").write_text("untracked\n")
    git_dir = project / ".git"

    def state() -> dict[str, tuple[str, str, int]]:
        return {path: (*value, (git_dir / path).lstat().st_mtime_ns)
                for path, value in fingerprint(git_dir, skip_git=False).items()}

    before = state()
    first = store.snapshot()
    (project / "new.txt").write_text("edited\n")
    second = store.snapshot()
    assert store.restore(store.plan_restore(first, second)).ok
    assert state() == before
    assert ".git/HEAD" not in store._repo.tree_entries(first.id)
    assert store._repo.tree_entries(first.id)["new.txt"][0] == 0o100644


def test_file_changed_while_read_is_left_to_git(store: CheckpointStore, project: Path,
                                                parallel: None,
                                                monkeypatch: pytest.MonkeyPatch):
    make_tree(project)
    real_read = pack_writer._read

    def racing_read(full: bytes, max_bytes: int) -> object:
        if full.endswith(b"/same1.txt"):
            (project / "same1.txt").write_text("written during the snapshot\n")
            return None  # as _read says when the file changed under it
        return real_read(full, max_bytes)

    monkeypatch.setattr(pack_writer, "_read", racing_read)
    first = store.snapshot()
    oid = store._repo.tree_entries(first.id)["same1.txt"][1]
    assert store.read_blob(oid) == b"written during the snapshot\n"
    assert store._repo.changed_paths() == []


def test_read_detects_a_file_that_changes(project: Path, monkeypatch: pytest.MonkeyPatch):
    path = project / "f.txt"
    path.write_text("before\n")
    full = os.fsencode(path)
    read = pack_writer._read(full, 1 << 20)
    assert read is not None and bytes(read[0]) == b"before\n"
    assert pack_writer._read(full, 3) is None  # too large
    assert pack_writer._read(os.fsencode(project / "gone"), 1 << 20) is None
    os.mkfifo(project / "fifo")
    assert pack_writer._read(os.fsencode(project / "fifo"), 1 << 20) is None
    real_fstat = os.fstat
    calls = []

    def growing_fstat(fd: int) -> os.stat_result:
        calls.append(fd)
        if len(calls) == 1:  # after the read: the file was appended to meanwhile
            path.write_text("before\nand after\n")
        return real_fstat(fd)

    monkeypatch.setattr(pack_writer.os, "fstat", growing_fstat)
    assert pack_writer._read(full, 1 << 20) is None


def test_a_failing_pack_falls_back_to_git(store: CheckpointStore, project: Path,
                                          parallel: None, monkeypatch: pytest.MonkeyPatch):
    make_tree(project)
    original = fingerprint(project)

    def no_space(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("app.core.checkpoints.shadow_repo.write_pack", no_space)
    first = store.snapshot()
    assert len(store._repo.tree_entries(first.id)) == len(
        [p for p, (kind, _) in original.items() if kind != "dir"])
    assert not (store.shadow_dir / RECOMPRESS_MARKER).exists()
    assert not list((store.shadow_dir / "objects" / "pack").glob("tmp_*"))


def test_gc_recompresses_the_first_pack(store: CheckpointStore, project: Path,
                                        parallel: None):
    for n in range(20):
        (project / f"{n}.txt").write_text("compressible text\n" * 2000)
    first = store.snapshot()
    assert (store.shadow_dir / RECOMPRESS_MARKER).exists()
    stored = store.usage_bytes()
    store.prune(max_age_days=None, max_bytes=None)
    assert not (store.shadow_dir / RECOMPRESS_MARKER).exists()
    assert store.usage_bytes() < stored / 4
    shadow_git(store, "fsck", "--strict", "--no-dangling")
    assert store.checkpoints()[0].id == first.id


def test_pack_index_large_offsets() -> None:
    objects = {bytes([n]) * 20: (offset, n) for n, offset in
               enumerate([12, 0x7FFFFFFF, 0x80000000, 5 << 32])}
    data = pack_writer._pack_index(objects, b"\1" * 20)
    n = len(objects)
    assert data[:8] == b"\377tOc\0\0\0\2"
    fanout = struct.unpack(">256I", data[8:8 + 1024])
    assert fanout[0] == 1 and fanout[3] == 4 and fanout[255] == 4
    at = 8 + 1024 + 20 * n + 4 * n
    small = struct.unpack(f">{n}I", data[at:at + 4 * n])
    assert small == (12, 0x7FFFFFFF, 0x80000000, 0x80000001)
    large = struct.unpack(">2Q", data[at + 4 * n:at + 4 * n + 16])
    assert large == (0x80000000, 5 << 32)
    assert data[-20:] == hashlib.sha1(data[:-20]).digest()
