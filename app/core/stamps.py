"""When a file's modification time can be trusted to show its next change.

Caches of what a folder or a file held are kept while the mtime stays the same. A change made
within the same tick of the filesystem's clock leaves the mtime as it was, so a result read
"just after" a change must not be kept. How long "just after" is depends on the filesystem:
whole seconds on FAT, HFS+ and some network mounts (then two seconds, as git's "racy" rule),
the kernel's coarse clock, a few milliseconds, on ext4, btrfs, XFS, APFS and tmpfs. A
nanosecond part of zero tells the first kind; the chance that a fine one lands on a whole
second is a billionth.
"""

from __future__ import annotations

__all__ = ["may_change_unseen"]

COARSE_WINDOW_NS = 2_000_000_000
FINE_WINDOW_NS = 50_000_000


def may_change_unseen(mtime_ns: int, read_at_ns: int) -> bool:
    """Could a change after ``read_at_ns`` leave ``mtime_ns`` as it is?"""
    window = COARSE_WINDOW_NS if mtime_ns % 1_000_000_000 == 0 else FINE_WINDOW_NS
    return mtime_ns >= read_at_ns - window
