"""What a sandboxed program may touch: the wall for one program, whatever enforces it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["SandboxPolicy"]


@dataclass(frozen=True)
class SandboxPolicy:
    writable: tuple[Path, ...] = ()
    # Mounted read-only after the writable folders: protects e.g. ``.git`` inside the project,
    # and keeps a folder that lives under the private /tmp visible.
    read_only: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    network: bool = False
