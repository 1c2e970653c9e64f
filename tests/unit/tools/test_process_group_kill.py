"""process_runner.kill_process_groups: a run's processes end with it, also one that left the
group. A sandbox's inner process starts a session of its own and dies with its parent only
once it has asked to (bubblewrap's --die-with-parent); a Stop in that moment used to leave it,
and the command it started, running with no parent."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

from app.core.tools.process_runner import kill_process_groups

# A parent in its own group whose child moves to a session of its own, then prints its pid.
LEAVER = ("import os, sys, time\n"
          "if os.fork() == 0:\n"
          "    os.setsid()\n"
          "    print(os.getpid(), flush=True)\n"
          "    time.sleep(60)\n"
          "else:\n"
          "    time.sleep(60)\n")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(") ", 1)[1][0] not in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_a_child_that_left_the_group_is_killed_with_it() -> None:
    parent = subprocess.Popen([sys.executable, "-c", LEAVER], start_new_session=True,
                              stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())  # printed after its setsid(): it has left
    try:
        kill_process_groups({parent.pid})
        parent.wait(10)
        deadline = time.monotonic() + 2
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not _alive(child), "the child that left the group outlived the kill"
    finally:
        with contextlib.suppress(OSError):
            os.kill(child, signal.SIGKILL)
        parent.stdout.close()


def test_groups_already_gone_are_no_error() -> None:
    done = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    done.wait(10)
    kill_process_groups({done.pid})
