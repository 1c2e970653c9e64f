"""The bubblewrap command line for a policy (Linux): an allowlist, by construction.

bubblewrap's new root is an empty tmpfs; nothing of the machine is there unless a mount puts
it there. ``mounts.plan_mounts`` decides what (the system folders, the project, the write
folders, the toolchains, a private home and /tmp, secrets hidden on top) and in which order
(by depth: bubblewrap applies options in order, and a deeper mount lands on a shallower one).
Every mount is of a path that exists, so bubblewrap never creates mount points on the
person's disk (they are made in the sandbox's own tmpfs).

The environment is filtered the same way (``environment``): variables naming a socket or a
path out of sight are unset, HOME and TMPDIR point to the private ones.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from app.core.sandbox.environment import sandbox_environment
from app.core.sandbox.mounts import (
    Access,
    Mount,
    MountPlan,
    own_runtime,
    plan_mounts,
    system_mounts,
)
from app.core.sandbox.policy import SandboxPolicy

__all__ = ["BWRAP_NAMESPACE_FLAGS", "bwrap_argv", "mount_options", "own_runtime",
           "system_mount_options"]

# The namespaces every bubblewrap sandbox uses: no network, no other processes, no
# capabilities, no terminal to inject keystrokes into, gone when Tebiki goes.
BWRAP_NAMESPACE_FLAGS: tuple[str, ...] = (
    "--unshare-all", "--new-session", "--die-with-parent", "--cap-drop", "ALL",
)


def _mount_option(mount: Mount) -> list[str]:
    path = str(mount.path)
    if mount.access is Access.SYMLINK:
        return ["--symlink", str(mount.source), path]
    if mount.access is Access.SYSTEM:
        return ["--dev" if path == "/dev" else "--proc", path]
    if mount.access is Access.EMPTY:
        return ["--tmpfs", path]
    if mount.access is Access.HIDDEN:
        return ["--tmpfs", path] if mount.folder else ["--ro-bind", "/dev/null", path]
    source = str(mount.source or mount.path)
    if mount.access is Access.WRITABLE:
        return ["--bind", source, path]
    return ["--ro-bind", source, path]


def mount_options(plan: MountPlan) -> list[str]:
    out: list[str] = []
    for mount in plan.mounts:
        out += _mount_option(mount)
    return out


def system_mount_options() -> list[str]:
    """The system folders alone, the mounts every sandbox starts from (the probe's)."""
    out: list[str] = []
    for mount in system_mounts():
        out += _mount_option(mount)
    return out


def _env_options(plan: MountPlan, env: Mapping[str, str] | None) -> list[str]:
    """Unset what the program must not see, set what points to the private places. Values
    are never put on the command line (other users can read it), only names and paths."""
    given = dict(env if env is not None else os.environ)
    kept = sandbox_environment(given, plan.roots, plan.home)
    out: list[str] = []
    for name in sorted(given):
        if name not in kept:
            out += ["--unsetenv", name]
    for name in ("HOME", "TMPDIR", "PATH"):
        if name in kept and given.get(name) != kept[name]:
            out += ["--setenv", name, kept[name]]
    return out


def bwrap_argv(bwrap: str, policy: SandboxPolicy, argv: list[str], executable: str,
               cwd: Path, env: Mapping[str, str] | None = None,
               plan: MountPlan | None = None) -> list[str]:
    """The argv that runs ``executable`` (with ``argv[1:]``) inside the sandbox; ``env``: the
    environment it is started with (default: this process's)."""
    plan = plan or plan_mounts(policy, executable=executable)
    out = [bwrap, *BWRAP_NAMESPACE_FLAGS]
    if policy.network:
        out.append("--share-net")
    out += mount_options(plan)
    # The new root itself (the folders bubblewrap made to hold the mounts) read-only: a write
    # outside the mounts fails loudly instead of landing in a tmpfs that vanishes.
    out += ["--remount-ro", "/"]
    out += _env_options(plan, env)
    out += ["--chdir", str(cwd), "--", executable, *argv[1:]]
    return out
