"""When a cached listing may be kept: the racy window follows the filesystem's clock."""

from __future__ import annotations

import os
from pathlib import Path

from app.core.stamps import COARSE_WINDOW_NS, FINE_WINDOW_NS, may_change_unseen

SECOND = 1_000_000_000


def test_whole_second_stamps_get_gits_two_second_window() -> None:
    mtime = 1_700_000_000 * SECOND
    assert may_change_unseen(mtime, mtime + COARSE_WINDOW_NS - 1)
    assert not may_change_unseen(mtime, mtime + COARSE_WINDOW_NS + 1)


def test_fine_stamps_are_trusted_after_a_few_ticks() -> None:
    mtime = 1_700_000_000 * SECOND + 123_456_789
    assert may_change_unseen(mtime, mtime + FINE_WINDOW_NS - 1)
    assert not may_change_unseen(mtime, mtime + FINE_WINDOW_NS + 1)


def test_this_machines_folders_have_fine_stamps(tmp_path: Path) -> None:
    # So a project edited a moment ago is cached on the next call, not walked again.
    stamps = set()
    for i in range(5):
        (tmp_path / f"f{i}").write_text("x")
        stamps.add(os.stat(tmp_path).st_mtime_ns % SECOND)
    assert stamps != {0}
