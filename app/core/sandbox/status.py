"""Is there a working OS sandbox on this machine? One honest probe, run once.

The probe starts the real thing (``bwrap`` with the same namespaces every sandboxed program
gets, or ``sandbox-exec`` on macOS) and runs ``true``: a bubblewrap that is installed but
cannot create user namespaces (a hardened kernel, a container without them) reports
"not available" with bubblewrap's own words and what to do, never a pretend "sandboxed".
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from enum import StrEnum

from app.core.sandbox.bubblewrap import BWRAP_NAMESPACE_FLAGS, system_mount_options

__all__ = ["SandboxBackend", "SandboxStatus", "probe_sandbox", "sandbox_status"]

PROBE_TIMEOUT_S = 10.0
# Set to "off" to run without a sandbox even where one works (then "require the sandbox"
# refuses programs, unless it is switched off too).
DISABLE_ENV = "TEBIKI_SANDBOX"


class SandboxBackend(StrEnum):
    BUBBLEWRAP = "bubblewrap"
    SEATBELT = "sandbox-exec"


@dataclass(frozen=True)
class SandboxStatus:
    """The result of the probe. ``reason`` says why not (and how to fix it) when unavailable."""

    available: bool
    backend: SandboxBackend | None = None
    executable: str | None = None
    reason: str = ""

    @property
    def summary(self) -> str:
        """One line for the tools list and the approval dialog."""
        if self.available:
            return f"sandboxed ({self.backend})"
        return f"not sandboxed: {self.reason}"

    @classmethod
    def unavailable(cls, reason: str) -> SandboxStatus:
        return cls(False, reason=reason)


_INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: sudo apt install bubblewrap; Fedora: "
                 "sudo dnf install bubblewrap) and restart Tebiki")
_USERNS_HINT = ("this system does not let programs create user namespaces (e.g. Ubuntu's "
                "kernel.apparmor_restrict_unprivileged_userns=1, or a container without them); "
                "allow them for bwrap or run Tebiki where they are available")


def _probe_bubblewrap(bwrap: str | None) -> SandboxStatus:
    path = bwrap or shutil.which("bwrap")
    if not path:
        return SandboxStatus.unavailable(f"bubblewrap (bwrap) is not installed; {_INSTALL_HINT}")
    try:
        # The flags every sandbox uses, on the system folders alone: proves exactly these work.
        argv = [path, *BWRAP_NAMESPACE_FLAGS, *system_mount_options(), "--", "true"]
        done = subprocess.run(argv, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return SandboxStatus.unavailable(f"bubblewrap at {path} could not start: {exc}")
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = said[-1] if said else f"exit status {done.returncode}"
        hint = _USERNS_HINT if "namespace" in detail.lower() else "see the log for details"
        return SandboxStatus.unavailable(f"bubblewrap fails here ({detail}); {hint}")
    return SandboxStatus(True, SandboxBackend.BUBBLEWRAP, path)


def _probe_seatbelt() -> SandboxStatus:
    path = "/usr/bin/sandbox-exec"
    if not os.path.exists(path):
        return SandboxStatus.unavailable("sandbox-exec is missing from this macOS")
    try:
        done = subprocess.run([path, "-p", "(version 1)(allow default)", "/usr/bin/true"],
                              stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return SandboxStatus.unavailable(f"sandbox-exec could not start: {exc}")
    if done.returncode != 0:
        return SandboxStatus.unavailable("sandbox-exec refuses to run here: "
                                         + done.stderr.decode("utf-8", "replace").strip())
    return SandboxStatus(True, SandboxBackend.SEATBELT, path)


def probe_sandbox(*, bwrap: str | None = None, platform: str | None = None) -> SandboxStatus:
    """Probe now (blocking: a few milliseconds, up to PROBE_TIMEOUT_S on a sick system).

    ``bwrap`` and ``platform`` exist for tests (a missing or broken bubblewrap)."""
    if os.environ.get(DISABLE_ENV, "").lower() in ("off", "0", "false", "no"):
        return SandboxStatus.unavailable(f"switched off ({DISABLE_ENV}={os.environ[DISABLE_ENV]})")
    platform = platform or sys.platform
    if platform.startswith("linux"):
        return _probe_bubblewrap(bwrap)
    if platform == "darwin":
        return _probe_seatbelt()
    if platform.startswith("win"):
        return SandboxStatus.unavailable("Tebiki has no sandbox for Windows yet")
    return SandboxStatus.unavailable(f"no sandbox is known for {platform}")


_lock = threading.Lock()
_cached: SandboxStatus | None = None


def sandbox_status() -> SandboxStatus:
    """The probe's result, probed on first use and then kept for the life of the process.
    The app calls this once at start in its worker thread, so no call waits for it later."""
    global _cached
    with _lock:
        if _cached is None:
            _cached = probe_sandbox()
        return _cached
