"""The sandbox and the sensitive paths of this app instance, from its settings (the fields
``SANDBOX_REQUIRED``, ``SANDBOX_READ_ONLY`` and ``SENSITIVE_PATHS`` the Settings dialog writes):
the functions that turn them into the ``Sandbox`` every tool gets and the ``SensitivePaths`` the
guards use (one list for both)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.settings_fields import SANDBOX_READ_ONLY, SANDBOX_REQUIRED, SENSITIVE_PATHS

if TYPE_CHECKING:
    from app.core.sandbox import Sandbox
    from app.core.sensitive_paths import SensitivePaths
    from app.core.store.settings import SettingsRepository

__all__ = ["app_sandbox", "app_sensitive_paths", "person_sensitive", "sandbox_folders"]


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
        settings.read(SANDBOX_READ_ONLY)))
    # The person's sensitive paths are hidden from programs too, their name patterns
    # ("*.secret") wherever a program can see: one list for the guards and the sandbox.
    paths, names = person_sensitive(settings.read(SENSITIVE_PATHS))
    sandbox = replace(sandbox, hidden=(*sandbox.hidden, *paths), secret_names=names)
    required = settings.read(SANDBOX_REQUIRED)
    return replace(sandbox, required=required) if required is not None else sandbox


def person_sensitive(entries: Iterable[str]) -> tuple[tuple[Path, ...], tuple[str, ...]]:
    """The person's sensitive paths (the setting's entries) as (paths, file-name patterns): an
    entry without a folder part is a name pattern, as ``SensitivePaths`` reads it."""
    entries = list(entries)
    names = tuple(e for e in entries if "/" not in e and not e.startswith("~"))
    paths = tuple(Path(os.path.expanduser(e)) for e in entries if e not in names)
    return paths, names


def sandbox_folders(folders: Iterable[str]) -> tuple[Path, ...]:
    """The read-only folders setting's entries as paths (~ is the home folder)."""
    return tuple(Path(os.path.expanduser(f)) for f in folders)
