"""The app's sandbox setting and the confinement it hands out for one program.

``Sandbox`` is the app's setting (the probe's status, whether the sandbox is required, the
shared hidden list); ``Sandbox.confine`` turns a tool's wishes into a ``Confinement`` that wraps
argv for the backend (bubblewrap, sandbox-exec), or refuses when the sandbox is required and
missing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from app.core.sandbox.bubblewrap import bwrap_argv
from app.core.sandbox.environment import sandbox_environment
from app.core.sandbox.mounts import MountPlan, plan_mounts
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

    def plan(self, executable: str | None = None) -> MountPlan:
        """What a program sees in this confinement, and why (``mounts``)."""
        return plan_mounts(self.policy, executable=executable)

    def wrap(self, argv: list[str], executable: str, cwd: Path,
             env: Mapping[str, str] | None = None) -> tuple[str, list[str]]:
        """(program to start, its argv) that runs ``executable`` confined. ``env``: the
        environment it will be started with (default: this process's); bubblewrap unsets in
        the sandbox what ``environment`` would leave out, so a caller that passes its own
        environment unfiltered is covered too."""
        program, wrapped, _ = self.launch(argv, executable, cwd, env)
        return program, wrapped

    def launch(self, argv: list[str], executable: str, cwd: Path,
               env: Mapping[str, str] | None = None) -> tuple[str, list[str], dict[str, str]]:
        """``wrap`` plus the environment to start it with (one plan for both)."""
        assert self.status.executable is not None
        given = dict(env if env is not None else os.environ)
        plan = self.plan(executable)
        seatbelt = self.status.backend is SandboxBackend.SEATBELT
        clean = sandbox_environment(given, plan.roots, plan.home, private_tmp=not seatbelt)
        if seatbelt:
            wrapped = seatbelt_argv(self.status.executable, self.policy, argv, executable, plan)
        else:
            wrapped = bwrap_argv(self.status.executable, self.policy, argv, executable, cwd,
                                 given, plan)
        return self.status.executable, wrapped, clean

    def environment(self, env: Mapping[str, str],
                    executable: str | None = None) -> dict[str, str]:
        """``env`` without the sockets and paths the program cannot see, HOME the private
        home (``environment.sandbox_environment``)."""
        plan = self.plan(executable)
        return sandbox_environment(env, plan.roots, plan.home)

    def explain(self, stderr: str) -> str | None:
        """A note for the model when a failure looks like the sandbox's doing, else None."""
        lower = stderr.lower()
        notes = []
        if "read-only file system" in lower:
            where = ", ".join(str(p) for p in self.policy.writable) or "nowhere"
            notes.append(f"writes are allowed only in: {where} (plus a private /tmp and "
                         "home); other folders, the project's protected parts (such as .git) "
                         "and hard-linked files (their twin may lie outside) are read-only")
        if not self.policy.network and any(s in lower for s in _NETWORK_FAILURES):
            notes.append("the network is off for this tool")
        unseen = self._unseen_paths(stderr)
        if unseen:
            notes.append("; ".join(f"{p} is not visible in the sandbox" for p in unseen)
                         + "; the person can add its folder in Settings → Sandbox")
        if not notes:
            return None
        return ("[sandbox] This looks like the sandbox refusing it: " + "; ".join(notes)
                + ". The person can change this in the tool's Configure… dialog "
                  "(write folders, network); do not try to work around the sandbox.")


    def _unseen_paths(self, stderr: str) -> list[str]:
        """Absolute paths named in ``stderr`` that the sandbox keeps out of sight."""
        found = list(dict.fromkeys(m.rstrip(".,;:)'\"") for m in _PATH.findall(stderr)))[:20]
        if not found or self.status.backend is not SandboxBackend.BUBBLEWRAP:
            return []
        plan = self.plan()
        unseen: list[str] = []
        for text in found:
            path = Path(os.path.normpath(text))
            while not os.path.lexists(path) and path != path.parent:
                path = path.parent  # a file it tried to make: is its folder out of sight?
            if path != Path("/") and not plan.sees(path) and len(unseen) < 3:
                unseen.append(text)
        return unseen


_PATH = re.compile(r"(?<![\w.~])(/[^\s'\"`:,;()\[\]{}<>]+)")

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
    ``read_only``: folders the person added in Settings → Sandbox, visible read-only to every
    program. ``home``: whose home the private one replaces (None: this process's).
    """

    status: SandboxStatus
    required: bool = False
    hidden: tuple[Path, ...] = field(default=())
    read_only: tuple[Path, ...] = field(default=())
    home: Path | None = None
    secret_names: tuple[str, ...] = field(default=())

    @classmethod
    def off(cls, reason: str = "no sandbox configured") -> Sandbox:
        return cls(SandboxStatus.unavailable(reason))

    def confine(self, *, writable: Iterable[Path] = (), read_only: Iterable[Path] = (),
                network: bool = False, revealed: Iterable[Path] = ()) -> Confinement | None:
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
            writable=tuple(writable), read_only=tuple(read_only),
            shared_read_only=self.read_only, hidden=self.hidden, network=network,
            home=self.home, revealed=tuple(revealed),
            secret_names=self.secret_names))


def machine_sandbox(data_dir: Path | None = None,
                    read_only: Iterable[Path] = ()) -> Sandbox:
    """This machine's sandbox as the app uses it by default: probed once, required wherever it
    works, hiding the sensitive paths and Tebiki's data folder (``data_dir``, by default the
    one ``TEBIKI_DATA_DIR`` or the platform names), showing the person's ``read_only`` folders.

    ``ToolContext`` starts from this, so code that builds a context without the app's setting
    (a script, a test, a path that forgot to pass it) is contained all the same."""
    from app.core.config import resolve_paths
    from app.core.sensitive_paths import sensitive_paths

    status = sandbox_status()
    folder = data_dir if data_dir is not None else resolve_paths().data_dir
    return Sandbox(status, status.available, sensitive_paths(extra=[folder]),
                   read_only=tuple(Path(os.path.expanduser(os.fspath(p))) for p in read_only))
