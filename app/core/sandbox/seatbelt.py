"""The macOS ``sandbox-exec`` profile for a policy (Seatbelt profile language, SBPL).

The same policy as bubblewrap's: reads allowed except the hidden paths, writes only inside
the writable folders (plus the temporary folder and the null devices), the read-only folders
protected inside them, no network unless enabled, no signals to processes outside the sandbox.
Later SBPL rules take precedence over earlier ones, so the denials come last.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.core.sandbox.policy import SandboxPolicy

__all__ = ["seatbelt_argv", "seatbelt_profile"]


def _quote(path: Path | str) -> str:
    text = os.fspath(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def _subpaths(paths: list[Path]) -> str:
    return " ".join(f"(subpath {_quote(p)})" for p in paths)


def seatbelt_profile(policy: SandboxPolicy, tmpdir: Path | None = None) -> str:
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
    read_only = [Path(os.path.realpath(p)) for p in policy.read_only
                 if any(Path(os.path.realpath(p)).is_relative_to(w) for w in writable)]
    if read_only:
        lines.append(f"(deny file-write* {_subpaths(read_only)})")
    hidden = [Path(os.path.realpath(p)) for p in policy.hidden]
    if hidden:
        lines.append(f"(deny file-read* file-write* {_subpaths(hidden)})")
    if not policy.network:
        lines.append("(deny network*)")
    lines.append("(deny signal (target others))")
    return "\n".join(lines) + "\n"


def seatbelt_argv(sandbox_exec: str, policy: SandboxPolicy, argv: list[str],
                  executable: str) -> list[str]:
    tmpdir = os.environ.get("TMPDIR")
    profile = seatbelt_profile(policy, Path(tmpdir) if tmpdir else None)
    return [sandbox_exec, "-p", profile, executable, *argv[1:]]
