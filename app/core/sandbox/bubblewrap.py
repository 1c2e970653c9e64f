"""The bubblewrap command line for a policy (Linux).

Mount order matters, because bubblewrap applies its options in order and a later mount covers
an earlier one:

1. the whole system read-only, fresh ``/dev``, ``/proc`` of the new PID namespace, empty
   private ``/tmp``;
2. hidden folders that *contain* a writable or readable folder (a project kept under a hidden
   folder stays reachable because its own bind comes after);
3. read-only folders that contain a writable one, the writable folders, then the other
   read-only ones (e.g. the project's ``.git`` inside the writable project, or a project under
   ``/tmp`` for a read-only tool);
4. every other hidden path: an empty tmpfs over a folder, ``/dev/null`` over a file or socket.

Paths are resolved first (a symlinked ``~/.ssh`` hides its target), and a path that does not
exist is skipped: bubblewrap would otherwise create mount points on the person's disk.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

from app.core.sandbox.policy import SandboxPolicy
from app.core.sandbox.status import BWRAP_BASE_FLAGS

__all__ = ["bwrap_argv"]

_PRIVATE_TMP = Path("/tmp")


def _real(path: Path) -> Path | None:
    """The resolved path, or None when nothing is there."""
    if not os.path.lexists(path):
        return None
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None


@functools.cache
def _own_runtime() -> tuple[Path, ...]:
    """Tebiki's interpreter, its environment and its code. Programs run them (self_eval and
    custom tools may call the same Python, MCP servers run from the install), so where they
    live under /tmp (a portable build, a checkout there) the private /tmp must not hide them."""
    app_root = Path(__file__).resolve().parents[3]  # the folder that holds the app package
    candidates: set[str] = {sys.prefix, sys.base_prefix, sys.exec_prefix,
                            os.path.dirname(os.path.realpath(sys.executable)), str(app_root)}
    return tuple(sorted(Path(c).resolve() for c in candidates if c))


def _within(path: Path, roots: tuple[Path, ...] | list[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def _hide(path: Path) -> list[str]:
    if path.is_dir():
        return ["--tmpfs", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


def bwrap_argv(bwrap: str, policy: SandboxPolicy, argv: list[str], executable: str,
               cwd: Path) -> list[str]:
    """The argv that runs ``executable`` (with ``argv[1:]``) inside the sandbox."""
    writable = [p for p in (_real(w) for w in policy.writable) if p is not None and p.is_dir()]
    readable = [p for p in (_real(r) for r in policy.read_only) if p is not None]
    readable += [p for p in _own_runtime() if p.is_relative_to(_PRIVATE_TMP)
                 and not _within(p, writable) and p not in readable and p.exists()]
    visible = writable + readable
    out = [bwrap, *BWRAP_BASE_FLAGS]
    if policy.network:
        out.append("--share-net")
    hidden: list[Path] = []
    for path in policy.hidden:
        real = _real(path)
        if real is None or real == Path("/"):
            continue
        # Already gone under the private /tmp, unless a bind brings its folder back.
        if real.is_relative_to(_PRIVATE_TMP) and not _within(real, visible):
            continue
        if real not in hidden:
            hidden.append(real)
    containing = [h for h in hidden if any(v.is_relative_to(h) for v in visible)]
    for path in containing:
        out += _hide(path)
    # A read-only folder around a writable one (the project, with only build/ writable) first,
    # so the writable bind lands on top of it; read-only parts inside writable ones (.git) after.
    around = [r for r in readable if any(w != r and w.is_relative_to(r) for w in writable)]
    for path in around:
        out += ["--ro-bind", str(path), str(path)]
    for path in writable:
        out += ["--bind", str(path), str(path)]
    for path in readable:
        if path not in around:
            out += ["--ro-bind", str(path), str(path)]
    for path in hidden:
        if path not in containing:
            out += _hide(path)
    out += ["--setenv", "TMPDIR", "/tmp", "--chdir", str(cwd), "--", executable, *argv[1:]]
    return out
