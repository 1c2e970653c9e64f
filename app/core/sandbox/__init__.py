"""The OS sandbox every program Tebiki starts runs in: containment instead of enumeration.

A command's options cannot all be known, but where it can write, what it can read and whether
it can reach the network can be decided by the operating system. ``status`` probes once whether
a sandbox works here (bubblewrap on Linux, sandbox-exec on macOS, none on Windows yet);
``policy`` is the wall for one program and ``confinement`` hands it out per tool; ``mounts``
plans what a program sees (an allowlist: ``toolchains`` finds what it needs, ``scanner`` the
secrets, sockets and hard links inside), ``environment`` filters what it is told, ``view``
lists it for a person; ``bubblewrap`` and ``seatbelt`` write the command lines.
"""

from app.core.sandbox.confinement import Confinement, Sandbox, SandboxRequired, machine_sandbox
from app.core.sandbox.policy import SandboxPolicy
from app.core.sandbox.status import SandboxBackend, SandboxStatus, probe_sandbox, sandbox_status

__all__ = [
    "Confinement",
    "Sandbox",
    "SandboxBackend",
    "SandboxPolicy",
    "SandboxRequired",
    "SandboxStatus",
    "machine_sandbox",
    "probe_sandbox",
    "sandbox_status",
]
