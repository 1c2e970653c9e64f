"""The macOS ``sandbox-exec`` profile for a policy (Seatbelt profile language, SBPL).

The same idea as bubblewrap's allowlist, as far as SBPL goes (it cannot mount an empty home):
nothing of the home folder can be read but what the mount plan shows (the project, the write
folders, the toolchains, Tebiki's runtime, the person's read-only folders); the hidden paths
and the secrets the plan found inside them cannot be read at all; writes only inside the
writable folders (plus the temporary folder and the null devices), the read-only folders
protected inside them, no network unless enabled, no signals to processes outside the sandbox.
Later SBPL rules take precedence over earlier ones, so the denials come last.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.core.sandbox.mounts import Access, MountPlan
from app.core.sandbox.policy import SandboxPolicy

__all__ = ["seatbelt_argv", "seatbelt_profile"]


def _quote(path: Path | str) -> str:
    text = os.fspath(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def _subpaths(paths: list[Path]) -> str:
    return " ".join(f"(subpath {_quote(p)})" for p in paths)


def _home_rules(plan: MountPlan) -> list[str]:
    """Deny reading the home folder, then allow back what the plan shows inside it."""
    if plan.home is None:
        return []
    home = Path(os.path.realpath(plan.home))
    shown = [m.path for m in plan.mounts if m.path != plan.home and m.path.is_relative_to(home)
             and m.access in (Access.READ_ONLY, Access.WRITABLE) and m.source is None]
    lines = [f"(deny file-read* (subpath {_quote(home)}))",
             # the folder itself (a program's getcwd, ls ~), not what is in it
             f"(allow file-read-metadata (literal {_quote(home)}))"]
    if shown:
        lines.append(f"(allow file-read* {_subpaths(shown)})")
    return lines


def seatbelt_profile(policy: SandboxPolicy, tmpdir: Path | None = None,
                     plan: MountPlan | None = None) -> str:
    writable = [Path(os.path.realpath(p)) for p in policy.writable]
    if tmpdir is not None:
        writable.append(Path(os.path.realpath(tmpdir)))
    lines = [
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        '(allow file-write* (literal "/dev/null") (literal "/dev/zero") (subpath "/dev/fd")'
        + (f" {_subpaths(writable)}" if writable else "") + ")",
    ]
    if plan is not None:
        lines += _home_rules(plan)
    read_only = [Path(os.path.realpath(p)) for p in policy.read_only
                 if any(Path(os.path.realpath(p)).is_relative_to(w) for w in writable)]
    if read_only:
        lines.append(f"(deny file-write* {_subpaths(read_only)})")
    hidden = [Path(os.path.realpath(p)) for p in policy.hidden]
    if plan is not None:  # also the secrets the scanner found (.env, keys) and sockets
        hidden += [m.path for m in plan.mounts if m.access is Access.HIDDEN]
    revealed = [Path(os.path.realpath(p)) for p in policy.revealed]
    hidden = [h for h in dict.fromkeys(hidden)
              if not any(h == r or h.is_relative_to(r) for r in revealed)]
    if hidden:
        lines.append(f"(deny file-read* file-write* {_subpaths(hidden)})")
    if not policy.network:
        lines.append("(deny network*)")
    lines.append("(deny signal (target others))")
    return "\n".join(lines) + "\n"


def seatbelt_argv(sandbox_exec: str, policy: SandboxPolicy, argv: list[str],
                  executable: str, plan: MountPlan | None = None) -> list[str]:
    tmpdir = os.environ.get("TMPDIR")
    profile = seatbelt_profile(policy, Path(tmpdir) if tmpdir else None, plan)
    return [sandbox_exec, "-p", profile, executable, *argv[1:]]
