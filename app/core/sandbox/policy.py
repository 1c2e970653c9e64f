"""What a sandboxed program may touch: the wall for one program, whatever enforces it.

The wall is an allowlist: a program sees the system folders, the folders named here, the
toolchains it needs and Tebiki's own runtime, and nothing else (``mounts`` plans the view).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["SandboxPolicy"]


@dataclass(frozen=True)
class SandboxPolicy:
    writable: tuple[Path, ...] = ()
    # Visible read-only, also inside the writable folders: protects e.g. ``.git`` inside the
    # project, and makes a folder outside them visible (the project of a read-only tool, the
    # person's own additions in Settings → Sandbox).
    read_only: tuple[Path, ...] = ()
    # Secrets hidden even where they lie inside a visible folder (the shared sensitive list,
    # Tebiki's data folder); files with a secret's name inside the visible folders are found
    # by the scanner and hidden too.
    hidden: tuple[Path, ...] = ()
    # Visible read-only to every program: the folders the person added in Settings → Sandbox.
    shared_read_only: tuple[Path, ...] = ()
    network: bool = False
    # The person's home folder: the program gets an empty private one at the same path.
    # None: the home of the process running Tebiki.
    home: Path | None = None
    # Sensitive paths the person approved this call to see: neither hidden nor out of sight.
    revealed: tuple[Path, ...] = ()
    # Extra file-name patterns the person calls secret (``*.secret``), hidden like .env.
    secret_names: tuple[str, ...] = ()
