"""The sandbox and the sensitive paths of this app instance, from its settings: the keys the
Settings dialog writes and the functions that turn them into the ``Sandbox`` every tool gets
and the ``SensitivePaths`` the guards use (one list for both)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.sandbox import Sandbox
    from app.core.sensitive_paths import SensitivePaths
    from app.core.store.settings import SettingsRepository

__all__ = ["SANDBOX_READ_ONLY_KEY", "SANDBOX_REQUIRED_KEY", "SENSITIVE_PATHS_KEY", "app_sandbox",
           "app_sensitive_paths", "person_sensitive", "sandbox_folders"]

# Settings key: refuse to run programs unsandboxed. Unset: on where the sandbox works.
SANDBOX_REQUIRED_KEY = "sandbox.required"
# Folders the person lets every sandboxed program read (a list of paths, ~ allowed).
SANDBOX_READ_ONLY_KEY = "sandbox.read_only_folders"
# The person's additions to the sensitive paths (paths, or file-name patterns).
SENSITIVE_PATHS_KEY = "permissions.sensitive_paths"


def app_sensitive_paths(sandbox: Sandbox, additions: Iterable[str] = ()) -> SensitivePaths:
    """The sensitive paths of this app instance: the shared list, what the sandbox hides
    (Tebiki's data folder among them) and the person's additions."""
    from app.core.sensitive_paths import SensitivePaths

    return SensitivePaths(extra=(*sandbox.hidden, *additions))


def app_sandbox(settings: SettingsRepository, data_dir: Path) -> Sandbox:
    """The sandbox setting of this app instance: the probe's status (probed once per process,
    a few milliseconds in the start-up worker), whether the person requires it, and the hidden
    paths — the shared sensitive list plus Tebiki's own data folder."""
    from app.core.sandbox import machine_sandbox

    sandbox = machine_sandbox(data_dir, read_only=sandbox_folders(
        settings.get(SANDBOX_READ_ONLY_KEY)))
    # The person's sensitive paths are hidden from programs too, their name patterns
    # ("*.secret") wherever a program can see: one list for the guards and the sandbox.
    paths, names = person_sensitive(settings.get(SENSITIVE_PATHS_KEY))
    sandbox = replace(sandbox, hidden=(*sandbox.hidden, *paths), secret_names=names)
    required = settings.get(SANDBOX_REQUIRED_KEY)
    return replace(sandbox, required=required) if isinstance(required, bool) else sandbox


def person_sensitive(value: object) -> tuple[tuple[Path, ...], tuple[str, ...]]:
    """The person's sensitive-paths setting as (paths, file-name patterns): an entry without
    a folder part is a name pattern, as ``SensitivePaths`` reads it."""
    if not isinstance(value, list):
        return (), ()
    entries = [v.strip() for v in value if isinstance(v, str) and v.strip()]
    names = tuple(e for e in entries if "/" not in e and not e.startswith("~"))
    paths = tuple(Path(os.path.expanduser(e)) for e in entries if e not in names)
    return paths, names


def sandbox_folders(value: object) -> tuple[Path, ...]:
    """The read-only folders setting as paths (anything but a list of texts: none)."""
    if not isinstance(value, list):
        return ()
    return tuple(Path(os.path.expanduser(v)) for v in value if isinstance(v, str) and v.strip())
