"""The app's sandbox setting and the confinement it hands out for one program.

``Sandbox`` is the app's setting (the probe's status, whether the sandbox is required, the
shared hidden list); ``Sandbox.confine`` turns a tool's wishes into a ``Confinement`` that wraps
argv for the backend (bubblewrap, sandbox-exec), or refuses when the sandbox is required and
missing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from app.core.sandbox.bubblewrap import bwrap_argv
from app.core.sandbox.policy import SandboxPolicy
from app.core.sandbox.seatbelt import seatbelt_argv
from app.core.sandbox.status import SandboxBackend, SandboxStatus, sandbox_status

__all__ = ["Confinement", "Sandbox", "SandboxRequired", "machine_sandbox"]


class SandboxRequired(Exception):
    """The sandbox is required but cannot run here; the message says why and what to do."""


@dataclass(frozen=True)
class Confinement:
    """A policy bound to the backend that enforces it."""

    status: SandboxStatus
    policy: SandboxPolicy

    def wrap(self, argv: list[str], executable: str, cwd: Path) -> tuple[str, list[str]]:
        """(program to start, its argv) that runs ``executable`` confined."""
        assert self.status.executable is not None
        if self.status.backend is SandboxBackend.SEATBELT:
            wrapped = seatbelt_argv(self.status.executable, self.policy, argv, executable)
        else:
            wrapped = bwrap_argv(self.status.executable, self.policy, argv, executable, cwd)
        return self.status.executable, wrapped

    def explain(self, stderr: str) -> str | None:
        """A note for the model when a failure looks like the sandbox's doing, else None."""
        lower = stderr.lower()
        notes = []
        if "read-only file system" in lower:
            where = ", ".join(str(p) for p in self.policy.writable) or "nowhere"
            notes.append(f"writes are allowed only in: {where} (plus a private /tmp); other "
                         "folders and the project's protected parts (such as .git) are "
                         "read-only")
        if not self.policy.network and any(s in lower for s in _NETWORK_FAILURES):
            notes.append("the network is off for this tool")
        if not notes:
            return None
        return ("[sandbox] This looks like the sandbox refusing it: " + "; ".join(notes)
                + ". The person can change this in the tool's Configure… dialog "
                  "(write folders, network); do not try to work around the sandbox.")


_NETWORK_FAILURES = (
    "network is unreachable", "temporary failure in name resolution", "could not resolve host",
    "name or service not known", "failed to establish a new connection", "no address associated",
    "connection refused", "couldn't resolve host", "getaddrinfo",
)


@dataclass(frozen=True)
class Sandbox:
    """The app's sandbox setting, given to every tool through ``ToolContext.sandbox``.

    ``required``: refuse to start a program unsandboxed (default on where the probe succeeds).
    ``hidden``: the shared sensitive paths plus Tebiki's own data folder.
    """

    status: SandboxStatus
    required: bool = False
    hidden: tuple[Path, ...] = field(default=())

    @classmethod
    def off(cls, reason: str = "no sandbox configured") -> Sandbox:
        return cls(SandboxStatus.unavailable(reason))

    def confine(self, *, writable: Iterable[Path] = (), read_only: Iterable[Path] = (),
                network: bool = False) -> Confinement | None:
        """The confinement for one program, or None to run it unsandboxed (allowed only when
        the sandbox is not required). Raises SandboxRequired otherwise."""
        if not self.status.available:
            if self.required:
                raise SandboxRequired(
                    f"Programs must run in the sandbox, and it is not available: "
                    f"{self.status.reason}. Fix that, or switch off \"Require the sandbox\" "
                    "in Settings to run programs unsandboxed.")
            return None
        return Confinement(self.status, SandboxPolicy(
            writable=tuple(writable), read_only=tuple(read_only), hidden=self.hidden,
            network=network))


def machine_sandbox(data_dir: Path | None = None) -> Sandbox:
    """This machine's sandbox as the app uses it by default: probed once, required wherever it
    works, hiding the sensitive paths and Tebiki's data folder (``data_dir``, by default the
    one ``TEBIKI_DATA_DIR`` or the platform names).

    ``ToolContext`` starts from this, so code that builds a context without the app's setting
    (a script, a test, a path that forgot to pass it) is contained all the same."""
    from app.core.config import resolve_paths
    from app.core.sensitive_paths import sensitive_paths

    status = sandbox_status()
    folder = data_dir if data_dir is not None else resolve_paths().data_dir
    return Sandbox(status, status.available, sensitive_paths(extra=[folder]))
