"""The sandbox of a tool that runs commands in the project: its settings and its wall.

Shared by shell_exec, self_eval and custom tools, so "where may a command write" and "may it
reach the network" are one pair of settings with one meaning:

- writable: the tool's write folders (the project folder by default), plus a private /tmp;
- read-only inside them, whatever the write folders say: everything git will execute later,
  outside the sandbox, when the person uses it (``git_metadata``) — the project's ``.git``
  whole at the read-only git level; at the read-write level its objects, refs and index stay
  writable (``git commit`` works) but its config, hooks, info, commondir, modules and
  worktrees do not, nor a nested repository's git dir, a ``.git`` file, the
  ``core.hooksPath`` folder or an included config file;
- git_safety's private folder (the controlled global git config) is visible read-only;
- network only when the tool's Configure… enables it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from app.core.sandbox import Confinement
from app.core.tools.base import GitPermission, ToolContext
from app.core.tools.config_fields import ConfigField, FieldKind
from app.core.tools.git_metadata import git_metadata
from app.core.tools.git_safety import private_state_dir

__all__ = [
    "NETWORK_FIELD",
    "WRITE_FOLDERS_FIELD",
    "command_confinement",
    "protected_git_paths",
    "write_folders",
]

WRITE_FOLDERS_FIELD = ConfigField(
    "write_folders", "Writable folders", FieldKind.FOLDER_LIST, default=(".",),
    help="Where commands may write; the sandbox keeps every other folder read-only. "
         "Relative to the project folder (. is the project itself).",
    placeholder="one folder per line, e.g. .")
NETWORK_FIELD = ConfigField(
    "network", "Network access", FieldKind.FLAG, default=False,
    help="Let commands reach the network (package installs, downloads). Off: the sandbox "
         "has no network at all.")


def write_folders(ctx: ToolContext, config: Mapping[str, Any]) -> tuple[Path, ...]:
    """The writable folders of a tool's config, resolved against the project folder; folders
    that do not exist are left out (the sandbox cannot mount them)."""
    value = WRITE_FOLDERS_FIELD.parse(config.get(WRITE_FOLDERS_FIELD.key,
                                                 list(WRITE_FOLDERS_FIELD.default)))
    if value is None:
        value = WRITE_FOLDERS_FIELD.default
    out: list[Path] = []
    for entry in value:
        path = Path(entry).expanduser()
        if not path.is_absolute():
            path = ctx.project_root / path
        try:
            resolved = path.resolve()
        except OSError:
            continue
        if resolved.is_dir() and resolved not in out:
            out.append(resolved)
    return tuple(out)


def protected_git_paths(folders: Iterable[Path], git_permission: GitPermission,
                        ) -> tuple[list[Path], list[Path]]:
    """(paths that stay read-only, git dirs a program may write) for programs that may write
    to ``folders``: only what lies inside them needs a mount (everything else is read-only
    already, and a mount outside could uncover a hidden path).

    The writable git dirs are mounted on themselves so they are mount points: a program can
    then neither rename the project's ``.git`` away nor put a planted one in its place."""
    folders = [f.resolve() for f in folders]

    def inside(path: Path) -> bool:
        return any(path == f or path.is_relative_to(f) for f in folders)
    metadata = git_metadata(folders)
    read_only = [p for p in metadata.read_only(git_permission) if inside(p)]
    writable = [] if git_permission is not GitPermission.READ_WRITE else \
        [g for g in metadata.own if inside(g)]
    return read_only, writable


def command_confinement(ctx: ToolContext, tool_name: str, *,
                        writable: Iterable[Path] | None = None,
                        network: bool | None = None) -> Confinement | None:
    """The confinement for programs ``tool_name`` starts (see the module docstring).

    ``writable``/``network`` override the tool's settings (a tool that must never write
    passes ``writable=()``). Raises ``SandboxRequired`` like ``ToolContext.confine``."""
    config = ctx.config_for(tool_name)
    folders = tuple(writable) if writable is not None else write_folders(ctx, config)
    read_only, git_dirs = protected_git_paths(folders, ctx.git_permission)
    state = private_state_dir()
    read_only.append(state)
    if network is None:
        network = NETWORK_FIELD.parse(config.get(NETWORK_FIELD.key)) is True
    # the git dirs after the folders that hold them: a later mount covers an earlier one
    return ctx.confine(writable=(*folders, *git_dirs), read_only=read_only, network=network)
