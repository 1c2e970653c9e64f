"""Pruning, deleting, concurrent snapshots and the conflict merge helper."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from app.core.checkpoints import CheckpointError, CheckpointStore, merge_text


def test_prune_drops_old_checkpoints_and_frees_space(store: CheckpointStore, project: Path):
    (project / "big.bin").write_bytes(os.urandom(1_000_000))
    old = store.snapshot("old")
    (project / "big.bin").unlink()
    (project / "small.txt").write_text("small\n")
    time.sleep(0.05)
    cutoff_days = (time.time() - old.created) / 86400 / 2  # older than half its age: just `old`
    newest = store.snapshot("newest")
    usage = store.usage_bytes()
    assert usage > 1_000_000
    assert store.prune(max_age_days=cutoff_days, max_bytes=None) == 1
    assert [cp.id for cp in store.checkpoints()] == [newest.id]
    assert store.usage_bytes() < usage - 900_000
    with pytest.raises(CheckpointError):
        store.changes(old, newest)  # its objects are gone


def test_prune_by_size_keeps_the_newest(store: CheckpointStore, project: Path):
    for n in range(4):
        (project / "blob.bin").write_bytes(os.urandom(300_000))
        store.snapshot(f"n{n}")
    (project / "blob.bin").unlink()
    newest = store.snapshot("newest")
    assert store.usage_bytes() > 1_200_000
    removed = store.prune(max_age_days=None, max_bytes=200_000)
    assert removed == 4
    assert [cp.id for cp in store.checkpoints()] == [newest.id]
    assert store.usage_bytes() < 200_000
    assert store.prune(max_age_days=0, max_bytes=0) == 0  # the newest always stays


def test_delete_all_then_start_afresh(store: CheckpointStore, project: Path):
    (project / "f.txt").write_text("x\n")
    store.snapshot()
    assert store.usage_bytes() > 0
    store.delete_all()
    assert not store.shadow_dir.exists()
    assert store.usage_bytes() == 0
    again = store.snapshot()
    assert [cp.id for cp in store.checkpoints()] == [again.id]


def test_snapshots_from_two_threads_do_not_corrupt_the_store(store: CheckpointStore,
                                                             project: Path):
    for n in range(50):
        (project / f"f{n}.txt").write_text(f"{n}\n")
    taken: list[str] = []
    errors: list[BaseException] = []

    def work(tag: str) -> None:
        try:
            for n in range(8):
                (project / f"{tag}{n}.txt").write_text(f"{tag} {n}\n")
                taken.append(store.snapshot(f"{tag} {n}").id)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(tag,)) for tag in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(set(taken)) == 16
    assert {cp.id for cp in store.checkpoints()} == set(taken)
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-progress"], env=store._repo.env,
                          capture_output=True, check=False, stdin=subprocess.DEVNULL)
    assert fsck.returncode == 0, fsck.stderr
    last = store.snapshot()
    assert [c.path for c in store.changes(last, store.snapshot())] == []
    # a second store on the same project (another window) shares the lock through the file
    other = CheckpointStore(store.shadow_dir.parents[1], project)
    assert other.shadow_dir == store.shadow_dir
    assert other.checkpoint(last.id) == last


def test_merge_text_combines_both_sides():
    base = "one\ntwo\nthree\nfour\nfive\n"
    ours = "one (person)\ntwo\nthree\nfour\nfive\n"
    theirs = "one\ntwo\nthree\nfour\nfive (checkpoint)\n"
    merged = merge_text(base, ours, theirs)
    assert merged.conflicts == 0
    assert merged.text == "one (person)\ntwo\nthree\nfour\nfive (checkpoint)\n"


def test_merge_text_marks_conflicts():
    merged = merge_text("a\n", "person\n", "checkpoint\n")
    assert merged.conflicts == 1
    assert "<<<<<<< yours" in merged.text and ">>>>>>> checkpoint" in merged.text


def test_a_crash_leaving_lock_files_does_not_block_the_store(tmp_path: Path, project: Path):
    (project / "f.txt").write_text("x\n")
    CheckpointStore(tmp_path / "data", project).snapshot()
    store = CheckpointStore(tmp_path / "data", project)  # as after a restart
    for stale in ("index.lock", "refs/heads/latest.lock"):
        (store.shadow_dir / stale).write_text("left by a crash\n")
    (project / "f.txt").write_text("y\n")
    store.snapshot()
    assert not (store.shadow_dir / "index.lock").exists()
