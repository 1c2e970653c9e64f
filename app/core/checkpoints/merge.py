"""Three-way text merge for restore conflicts, through ``git merge-file`` (no repository)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from app.core.checkpoints.model import MergeResult
from app.core.checkpoints.shadow_repo import GIT_TIMEOUT_S, CheckpointError

__all__ = ["merge_text"]

_ERROR_EXIT = 255  # merge-file returns -1 on errors (binary input, unreadable files)


def merge_text(base: str, ours: str, theirs: str, *,
               labels: tuple[str, str, str] = ("yours", "agent", "checkpoint")) -> MergeResult:
    """Merge the changes from ``base`` to ``ours`` and from ``base`` to ``theirs``.

    For a restore conflict: ``base`` is the expected (agent's) version, ``ours`` the person's
    current file, ``theirs`` the checkpoint's. Conflicting hunks are marked in the text the
    usual way (``<<<<<<< yours`` …). Text is stored as UTF-8 with undecodable bytes kept
    (surrogateescape), so the merge never changes bytes it did not have to.
    """
    with tempfile.TemporaryDirectory(prefix="tebiki-merge-") as tmp:
        folder = Path(tmp)
        names = ("ours", "base", "theirs")
        for name, text in zip(names, (ours, base, theirs), strict=True):
            (folder / name).write_bytes(text.encode("utf-8", "surrogateescape"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update({"LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                    "GIT_CEILING_DIRECTORIES": str(folder.parent)})
        argv = ["git", "merge-file", "-p",
                "-L", labels[0], "-L", labels[1], "-L", labels[2], *names]
        try:
            proc = subprocess.run(argv, cwd=folder, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CheckpointError(f"git merge-file could not run: {exc}") from exc
    if proc.returncode == _ERROR_EXIT or proc.returncode < 0:
        msg = proc.stderr.decode("utf-8", "replace").strip()
        raise CheckpointError(f"git merge-file failed: {msg}")
    return MergeResult(text=proc.stdout.decode("utf-8", "surrogateescape"),
                       conflicts=proc.returncode)
