"""One instance per data folder: the lock (no Qt), and the second start's message path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.instance_lock import InstanceLock, InstanceRunningError, instance_channel


def test_a_second_claim_on_the_folder_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    first = InstanceLock.acquire(tmp_path)
    with pytest.raises(InstanceRunningError) as info:
        InstanceLock.acquire(tmp_path)
    assert info.value.pid == os.getpid()
    assert str(tmp_path) in str(info.value) and "already running" in str(info.value)
    first.release()
    InstanceLock.acquire(tmp_path).release()  # free again once the first let go


def test_another_process_holding_the_folder_is_seen(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from pathlib import Path; from app.core.instance_lock import InstanceLock;"
         f"lock = InstanceLock.acquire(Path({str(tmp_path)!r})); print('held', flush=True);"
         "sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(InstanceRunningError) as info:
            InstanceLock.acquire(tmp_path)
        assert info.value.pid == holder.pid
    finally:
        holder.communicate("")
    InstanceLock.acquire(tmp_path).release()  # a process that ended holds nothing


def test_other_data_folders_are_independent(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = InstanceLock.acquire(tmp_path / "a"), InstanceLock.acquire(tmp_path / "b")
    assert instance_channel(tmp_path / "a") != instance_channel(tmp_path / "b")
    a.release()
    b.release()
