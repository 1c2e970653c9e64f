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

__all__ = ["dropped_names", "minimal_env", "sandbox_environment"]

# Environment variables passed through from the app to children (values, not secrets).
_PASS_THROUGH = ("HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
                 "SYSTEMROOT")
_FIXED_ENV = {
    "TERM": "dumb",
    "NO_COLOR": "1",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    "GIT_CONFIG_NOSYSTEM": "1",
    "EDITOR": "true",
    "VISUAL": "true",
}
_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


def minimal_env(extra: Mapping[str, str] | None = None,
                project_root: Path | None = None) -> dict[str, str]:
    """The environment children get, sandboxed or not: PATH, HOME, locale, TERM=dumb and
    pager/editor stubs (no API keys or other secrets of the app). ``sandbox_environment``
    then takes out of it what a sandboxed program cannot see.

    PATH keeps only absolute entries outside the project folder, so a repository cannot plant
    a program that shadows an allowed one.
    """
    env: dict[str, str] = {}
    for key in _PASS_THROUGH:
        value = os.environ.get(key)
        if value:
            env[key] = value
    env.setdefault("LANG", "C.UTF-8")
    parts = []
    for entry in os.environ.get("PATH", _DEFAULT_PATH).split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        if project_root is not None and _is_within(Path(entry), project_root):
            continue
        if entry not in parts:
            parts.append(entry)
    env["PATH"] = os.pathsep.join(parts) or _DEFAULT_PATH
    env.update(_FIXED_ENV)
    if extra:
        env.update(extra)
    return env


def _is_within(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False

_SOCKET_NAME = re.compile(r".*_(SOCK|SOCKET|HOST|ADDRESS)$", re.IGNORECASE)
_SOCKET_VALUE = re.compile(r"^(unix|tcp|ssh|npipe|fd|vsock|abstract)(:|://)", re.IGNORECASE)


def _lexically_within(path: str, roots: tuple[str, ...]) -> bool:
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
        # "/x:y" is not a list of paths: one path, judged by its first part
        return value if _lexically_within(parts[0], roots) else None
    if name.upper().endswith("PATH"):
        kept = [p for p in parts if p and _lexically_within(p, roots)]
        return os.pathsep.join(dict.fromkeys(kept)) if kept else None
    return value if all(_lexically_within(p, roots) for p in parts if p) else None


def sandbox_environment(env: Mapping[str, str], visible: Iterable[Path],
                        home: Path | None, private_tmp: bool = True) -> dict[str, str]:
    """``env`` as the sandboxed program may see it (see the module docstring); ``visible``:
    the roots of what it sees (``MountPlan.roots``). ``private_tmp`` False (sandbox-exec,
    which has no private /tmp): the given TMPDIR stays, and paths in it."""
    roots = tuple(os.fspath(p) for p in visible)
    tmpdir = env.get("TMPDIR")
    if not private_tmp and tmpdir and os.path.isabs(tmpdir):
        roots += (os.path.realpath(tmpdir), os.path.normpath(tmpdir))
    out: dict[str, str] = {}
    for name, value in env.items():
        kept = _keep(name, value, roots)
        if kept is not None:
            out[name] = kept
    if home is not None:
        out["HOME"] = os.fspath(home)
    if private_tmp:
        out["TMPDIR"] = "/tmp"
    if "PATH" not in out:
        out["PATH"] = _DEFAULT_PATH
    return out


def dropped_names(env: Mapping[str, str], visible: Iterable[Path],
                  home: Path | None) -> list[str]:
    """The variables of ``env`` that ``sandbox_environment`` leaves out."""
    kept = sandbox_environment(env, visible, home)
    return sorted(name for name in env if name not in kept)
