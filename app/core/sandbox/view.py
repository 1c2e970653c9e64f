"""What a sandboxed program sees, listed for a person: every path, its access and why.

Settings → Sandbox shows it, and ``python -m app.core.sandbox show`` prints it. It is the same
plan the sandbox mounts (``mounts.plan_mounts``), so the listing cannot drift from the wall.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from app.core.sandbox.confinement import Confinement, Sandbox
from app.core.sandbox.environment import dropped_names, minimal_env
from app.core.sandbox.mounts import Access, MountPlan

__all__ = ["ViewRow", "format_view", "project_confinement", "sandbox_view"]

_ACCESS_WORDS = {
    Access.READ_ONLY: "read-only", Access.WRITABLE: "writable", Access.HIDDEN: "hidden",
    Access.EMPTY: "empty (private)", Access.SYSTEM: "private", Access.SYMLINK: "symlink",
}


@dataclass(frozen=True)
class ViewRow:
    path: str
    access: str
    reason: str


def plan_rows(plan: MountPlan) -> list[ViewRow]:
    rows: list[ViewRow] = []
    for mount in plan.mounts:
        reason = mount.reason
        if mount.access is Access.SYMLINK:
            reason = f"{reason} → {mount.source}"
        elif mount.source is not None:
            reason = f"{reason} (from {mount.source})"
        rows.append(ViewRow(str(mount.path), _ACCESS_WORDS[mount.access], reason))
    return rows


def sandbox_view(confinement: Confinement, *, executable: str | None = None,
                 env: Mapping[str, str] | None = None) -> list[ViewRow]:
    """Exactly what a program started in ``confinement`` sees: the mounts in the order they
    are made (a later, deeper row wins over an earlier one), then the environment variables
    taken away. Everything else of the machine is not there at all."""
    plan = confinement.plan(executable)
    rows = plan_rows(plan)
    rows += [ViewRow("(note)", "", note) for note in plan.notes]
    given = env if env is not None else minimal_env()
    rows += [ViewRow(f"${name}", "hidden", "names a socket, or a path the program cannot see")
             for name in dropped_names(given, plan.roots, plan.home)]
    return rows


def project_confinement(sandbox: Sandbox, project: Path, *, writable: Iterable[Path] = (),
                        network: bool = False) -> Confinement | None:
    """The confinement of a command tool in ``project`` with its default settings: the write
    folders (default: the project), the project's ``.git`` read-only, the network off."""
    project = project.resolve()
    folders = tuple(p.resolve() for p in writable) or (project,)
    read_only = [p for p in (project / ".git",) if p.exists()]
    if not any(project.is_relative_to(w) for w in folders):
        read_only.insert(0, project)
    return sandbox.confine(writable=folders, read_only=read_only, network=network)


def format_view(rows: list[ViewRow]) -> str:
    width = max((len(r.access) for r in rows), default=0)
    lines = ["Nothing of this machine is visible to a sandboxed program but what is listed; "
             "a later row lies on top of an earlier one.", ""]
    lines += [f"{r.access:<{width}}  {r.path}  — {r.reason}" for r in rows]
    return "\n".join(lines)
