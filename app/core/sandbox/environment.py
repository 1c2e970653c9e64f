"""The environment a sandboxed program gets: nothing that points out of its sight.

A socket is a door to another program (ssh-agent, Docker, a D-Bus session): the mounts do not
show the ones outside, and the environment must not name them either, nor any other folder the
program cannot see (a stale path is harmless, but a variable naming a host and port is a way
out the moment the network is on). So, from whatever environment a tool passes (custom tools
and MCP servers add their own):

- every variable named ``*_SOCK``, ``*_SOCKET``, ``*_HOST`` or ``*_ADDRESS`` (``SSH_AUTH_SOCK``,
  ``DOCKER_HOST``, ``DBUS_SESSION_BUS_ADDRESS``) is dropped, and every value that is a socket
  address (``unix:…``, ``tcp://…``);
- a path-like value (an absolute path, or a ``:``-list of them) outside the visible tree is
  dropped; ``*PATH`` lists (``PATH``, ``PYTHONPATH``) keep their visible entries;
- ``HOME`` is the private home, ``TMPDIR`` the private /tmp.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["dropped_names", "sandbox_environment"]

_SOCKET_NAME = re.compile(r".*_(SOCK|SOCKET|HOST|ADDRESS)$", re.IGNORECASE)
_SOCKET_VALUE = re.compile(r"^(unix|tcp|ssh|npipe|fd|vsock|abstract)(:|://)", re.IGNORECASE)


def _within(path: str, roots: tuple[str, ...]) -> bool:
    path = os.path.normpath(path)
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _keep(name: str, value: str, roots: tuple[str, ...]) -> str | None:
    """The value to pass (maybe filtered), or None to drop the variable."""
    if _SOCKET_NAME.fullmatch(name) or _SOCKET_VALUE.match(value):
        return None
    if not value.startswith("/"):
        return value
    parts = value.split(os.pathsep)
    if not all(p.startswith("/") or not p for p in parts):
        return value if _within(parts[0], roots) else None  # "/x:y" is not a list of paths
    if name.upper().endswith("PATH"):
        kept = [p for p in parts if p and _within(p, roots)]
        return os.pathsep.join(dict.fromkeys(kept)) if kept else None
    return value if all(_within(p, roots) for p in parts if p) else None


def sandbox_environment(env: Mapping[str, str], visible: Iterable[Path],
                        home: Path | None) -> dict[str, str]:
    """``env`` as the sandboxed program may see it (see the module docstring); ``visible``:
    the roots of what it sees (``MountPlan.roots``)."""
    roots = tuple(os.fspath(p) for p in visible)
    out: dict[str, str] = {}
    for name, value in env.items():
        kept = _keep(name, value, roots)
        if kept is not None:
            out[name] = kept
    if home is not None:
        out["HOME"] = os.fspath(home)
    out["TMPDIR"] = "/tmp"
    if "PATH" not in out:
        out["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    return out


def dropped_names(env: Mapping[str, str], visible: Iterable[Path],
                  home: Path | None) -> list[str]:
    """The variables of ``env`` that ``sandbox_environment`` leaves out."""
    kept = sandbox_environment(env, visible, home)
    return sorted(name for name in env if name not in kept)
