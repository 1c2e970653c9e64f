"""The structural facts of one call, from its tool's spec, its input and its context.

- ``read_only``: it changes nothing (the spec says so for this input, or the tool's server
  claims it and Tebiki runs that server contained: ``app.core.permissions.server_claims``);
- ``contained``: its effects stay inside the project — its paths are in the project (the file
  tools' ScopedFs enforces that for writes) and every program it starts runs in a working OS
  sandbox that can write only to folders in the project and has no network; a third-party
  tool is contained when its server runs in that sandbox without network and write folders,
  or when Tebiki's own tool for it only reads (``read_resource``);
- ``reversible``: nothing to undo (read-only), or every effect is a file change the
  checkpoints around it cover (the spec's ``undoable``, checkpoints on, contained, and a
  command's ``.git`` kept read-only); what the newest checkpoint does not record is read-only
  to a call that runs unasked, so a call whose paths lie there, or that failed before for
  want of writing there, is not reversible (it asks);
- ``egress``: it can send data out of the machine (web tools, a command with network or
  without a working sandbox, any tool of an MCP server or custom tool whose programs are not
  sandboxed without network, a tool whose server says it reaches an open world);
- ``outside`` / ``sensitive``: its paths outside the project, and the ones that are secrets;
- ``persistence``: the paths it writes that the person's tools run without being asked
  (``app.core.tools.persistence``), for the guard that never lets such a write run unasked.

A write into anything git will execute (``app.core.tools.git_metadata``: any git dir, a
``.git`` file, the ``core.hooksPath`` folder, an included config) is not contained: the
person's own git runs it later, outside the sandbox, and checkpoints do not record git dirs.

Facts a call cannot prove are false (not contained, not reversible) or true (egress): the
permission modes build on them, and an unknown must ask.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from app.core.checkpoints.coverage import RECORDS_GIT_STATE, Coverage, needs_unrecorded
from app.core.checkpoints.coverage import SESSION_KEY as COVERAGE_KEY
from app.core.permissions.server_claims import (
    DESTRUCTIVE,
    READ_ONLY_CLAIM,
    SANDBOX_PROOF,
    ServerClaims,
    server_sandbox_gap,
)
from app.core.sandbox import Sandbox
from app.core.sandbox.mounts import scanner_for
from app.core.sandbox.scanner import same_files
from app.core.sensitive_paths import SensitivePaths
from app.core.tools.base import GitPermission, ToolContext, ToolSpec
from app.core.tools.command_sandbox import NETWORK_FIELD, WRITE_FOLDERS_FIELD, write_folders
from app.core.tools.containment import program_containment
from app.core.tools.git_metadata import git_metadata
from app.core.tools.persistence import persistence_reason

__all__ = ["CallFacts", "call_facts"]

BUILTIN_SERVERS = frozenset({"builtin"})
_GIT_DIR = ".git"
# Why Tebiki's own read-only tool for a server (read_resource) is contained.
_ONLY_READS = "it only reads, by construction"


@dataclass(frozen=True)
class CallFacts:
    read_only: bool
    contained: bool
    reversible: bool
    egress: bool
    destination: str = ""  # where data would go, for a person to read
    outside: tuple[str, ...] = ()
    sensitive: tuple[tuple[str, str], ...] = ()  # (path, the entry that makes it sensitive)
    not_contained_because: str = ""
    not_reversible_because: str = ""
    persistence: tuple[tuple[str, str], ...] = ()  # (path written, why it runs unasked)
    # What besides Tebiki's own knowledge made a fact: "server's claim" for a read-only claim
    # that counts, the proof of containment of a third-party tool, and a claim that did not
    # count (app.core.permissions.server_claims).
    read_only_by: str = ""
    contained_by: str = ""
    claim_not_counted: str = ""

    @property
    def secret_paths(self) -> tuple[Path, ...]:
        """The sensitive paths the call reads, writes or names."""
        return tuple(Path(path) for path, _entry in self.sensitive)

    def describe(self) -> str:
        """"contained, reversible, sends nothing out": what auto mode looked at."""
        parts = []
        if self.sensitive:
            parts.append(f"touches a sensitive path ({self.sensitive[0][0]})")
        if self.read_only:
            parts.append(f"read-only ({self.read_only_by})" if self.read_only_by else
                         "read-only")
        if self.contained:
            parts.append(f"contained ({self.contained_by})" if self.contained_by else
                         "contained")
        else:
            parts.append(f"not contained ({self.not_contained_because})")
        if self.claim_not_counted:
            parts.append(self.claim_not_counted)
        if not self.read_only:
            parts.append("reversible" if self.reversible else
                         f"not reversible ({self.not_reversible_because})")
        parts.append(f"sends data to {self.destination}" if self.egress else
                     "sends nothing out")
        return ", ".join(parts)


def _inside(path: str, root: Path | None) -> bool:
    if root is None:
        return False
    prefix = str(root).rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


def call_facts(spec: ToolSpec, tool_input: Mapping[str, Any], *,
               path_subjects: Sequence[str], project: Path | None, ctx: ToolContext | None,
               sandbox: Sandbox, checkpoints: bool,
               sensitive: SensitivePaths | None) -> CallFacts:
    """The facts of a call to ``spec`` with ``tool_input``. ``path_subjects`` are the call's
    resolved paths (for a tool whose subjects are paths), ``ctx`` the capability context the
    call runs with (None: the tool's defaults), ``checkpoints`` whether the session records
    checkpoints of ``project``."""
    read_only = spec.is_read_only(tool_input)  # Tebiki's own word; a server's claim below
    named = _named_paths(spec, tool_input, project)
    outside = tuple(p for p in (*path_subjects, *named) if not _inside(p, project))
    # What the call reads or writes by its paths and by the paths it names in free text (a
    # command's ``cat .env``): one answer for the guard, the flow labels and the audit.
    secrets = _secrets((*path_subjects, *named), sensitive) + \
        _secret_twins((*path_subjects, *named), project, sandbox)
    call = _Call.of(spec, tool_input, path_subjects, project, ctx, read_only, sandbox)
    claims = ServerClaims() if call.builtin else ServerClaims.of(spec)
    egress = call.network or claims.open_world or \
        (not call.builtin and not (spec.sandboxed and not spec.needs_network))

    in_git = [] if read_only else [p for p in path_subjects if _GIT_DIR in p.split(os.sep)]
    persistence = () if read_only or project is None else _persistence(path_subjects, project)
    git_code = None if read_only or project is None or in_git or outside else \
        _git_protected(path_subjects, project)
    why_not = call.not_contained_because(outside, in_git, git_code, sandbox)
    contained_by = "" if why_not or call.builtin else \
        _ONLY_READS if read_only else SANDBOX_PROOF
    read_only_by = ""
    if not read_only and claims.read_only_counts(contained_by):
        read_only, read_only_by = True, READ_ONLY_CLAIM
    why_not_undo = "" if read_only else \
        DESTRUCTIVE if claims.destructive else call.not_reversible_because(not why_not,
                                                                           checkpoints)
    return CallFacts(read_only=read_only, contained=not why_not, reversible=not why_not_undo,
                     egress=egress,
                     destination=_destination(spec, tool_input, claims) if egress else "",
                     outside=outside, sensitive=secrets, not_contained_because=why_not,
                     not_reversible_because=why_not_undo, persistence=persistence,
                     read_only_by=read_only_by, contained_by=contained_by,
                     claim_not_counted=claims.not_counted(contained_by))


def _named_paths(spec: ToolSpec, tool_input: Mapping[str, Any],
                 project: Path | None) -> list[str]:
    """The paths the call names in free text (the spec's ``named_paths``)."""
    if spec.named_paths is None:
        return []
    try:
        return spec.named_paths(tool_input, project)
    except Exception:  # unreadable: the subjects check already marks such a call
        return []


def _secrets(paths: Sequence[str],
             sensitive: SensitivePaths | None) -> tuple[tuple[str, str], ...]:
    """(path, the sensitive entry it matches) for each distinct path that is a secret."""
    if sensitive is None:
        return ()
    found = ((p, sensitive.match(p)) for p in dict.fromkeys(paths))
    return tuple((p, entry) for p, entry in found if entry is not None)


def _secret_twins(paths: Sequence[str], project: Path | None,
                  sandbox: Sandbox) -> tuple[tuple[str, str], ...]:
    """(path, why) for each path that is a hard link of a secret (the project's secret files,
    the sensitive list): the secret under a harmless name, hidden from programs too."""
    linked = [p for p in dict.fromkeys(paths) if _hard_linked(p)]
    if not linked:
        return ()
    twins = set(same_files(tuple(Path(p) for p in linked), sandbox.hidden))
    if project is not None and project.is_dir():
        twins |= set(scanner_for(sandbox.secret_names).scan(project).secret_twins)
    return tuple((p, "a hard link of a secret file") for p in linked if Path(p) in twins)


def _hard_linked(path: str) -> bool:
    try:
        info = os.stat(path, follow_symlinks=False)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink > 1


@dataclass(frozen=True)
class _Call:
    """One call as its containment and reversibility are judged: the tool, its input and
    paths, the context it runs with and the tool's configuration there."""

    spec: ToolSpec
    tool_input: Mapping[str, Any]
    path_subjects: Sequence[str]
    project: Path | None
    ctx: ToolContext | None
    config: Mapping[str, Any]
    builtin: bool
    network: bool  # its programs may reach the network (the spec, or the tool's setting)
    read_only: bool  # the spec says so: Tebiki's word, never a server's

    @classmethod
    def of(cls, spec: ToolSpec, tool_input: Mapping[str, Any], path_subjects: Sequence[str],
           project: Path | None, ctx: ToolContext | None, read_only: bool,
           sandbox: Sandbox) -> _Call:
        builtin = spec.server_id in BUILTIN_SERVERS
        config = ctx.config_for(spec.name) if ctx is not None else {}
        network = spec.needs_network
        if spec.runs_programs and NETWORK_FIELD in spec.config_fields:
            # The setting closes the network only where a working sandbox enforces it: a
            # program run outside one (no sandbox, "Require the sandbox" off) reaches it.
            network = network or NETWORK_FIELD.parse(config.get(NETWORK_FIELD.key)) is True \
                or not program_containment(spec, sandbox).contained
        return cls(spec, tool_input, path_subjects, project, ctx, config, builtin, network,
                   read_only)

    def not_contained_because(self, outside: tuple[str, ...], in_git: list[str],
                              git_code: tuple[str, Path] | None, sandbox: Sandbox) -> str:
        """Why the call's effects may leave the project ("" when they cannot)."""
        if self.project is None:
            return "no project folder is open"
        if outside:
            return f"{outside[0]} is outside the project"
        if in_git:
            # Hooks and config there run later, outside the sandbox, when the person uses git;
            # and checkpoints do not record .git.
            return f"{in_git[0]} is inside a git repository's .git folder"
        if git_code is not None:
            path, protected = git_code
            return (f"{path} is part of what git runs ({protected}): the person's git would "
                    "run it later, outside the sandbox")
        if self.read_only and not self.builtin:
            return ""  # Tebiki's own reading tool for a server (read_resource)
        if self.spec.runs_programs:
            return self._programs_not_contained_because(self.project, sandbox)
        if not self.builtin:
            return f"a tool of {self.spec.server_id}, which Tebiki cannot see into"
        return ""

    def _programs_not_contained_because(self, project: Path, sandbox: Sandbox) -> str:
        spec, ctx = self.spec, self.ctx
        containment = program_containment(spec, sandbox)
        if not containment.contained:
            return containment.label
        if self.network:
            return "its programs may reach the network"
        if not self.builtin:
            return server_sandbox_gap(spec)
        if ctx is None:
            return ""
        has_write_folders = WRITE_FOLDERS_FIELD in spec.config_fields
        if has_write_folders:
            outside_folders = [f for f in write_folders(ctx, self.config)
                               if not _inside(str(f), project)]
            if outside_folders:
                return f"it may write to {outside_folders[0]}, outside the project"
        # what the sandbox must keep read-only could not all be found
        folders = write_folders(ctx, self.config) if has_write_folders else (project,)
        return git_metadata([project, *folders]).incomplete or ""

    def not_reversible_because(self, contained: bool, checkpoints: bool) -> str:
        """Why checkpoints could not undo what the call changes ("" when they can)."""
        spec, ctx = self.spec, self.ctx
        records_git = self.builtin and spec.annotations.get(RECORDS_GIT_STATE) is True
        if not spec.undoable:
            return "its effects are not only file changes a checkpoint records"
        if not checkpoints:
            return "checkpoints are off"
        if not contained:
            return "its effects may reach outside the project"
        if records_git and not _repository_recorded(self.project, ctx):
            return "checkpoints do not record this project's git repository"
        if ctx is None:
            return ""
        if spec.runs_programs and not records_git and \
                ctx.git_permission is GitPermission.READ_WRITE:
            return "its commands may change the project's git repository"
        return _unrecorded_reason(spec, self.tool_input, self.path_subjects, ctx)


def _persistence(paths: Sequence[str], project: Path) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for path in paths:
        if _inside(path, project):
            reason = persistence_reason(os.path.relpath(path, project))
            if reason is not None:
                out.append((path, reason))
    return tuple(out)


def _git_protected(paths: Sequence[str], project: Path) -> tuple[str, Path] | None:
    """The first path that lies in what git executes, with the protected path holding it."""
    if not paths:
        return None
    metadata = git_metadata([project])
    for path in paths:
        protected = metadata.protecting(Path(path))
        if protected is not None:
            return path, protected
    return None


def _repository_recorded(project: Path | None, ctx: ToolContext | None) -> bool:
    """Whether checkpoints record the project repository's HEAD, refs and index (the newest
    checkpoint says; before the first, whether the project has a repository of its own)."""
    coverage = ctx.session.get(COVERAGE_KEY) if ctx is not None else None
    if isinstance(coverage, Coverage):
        return coverage.repository
    if project is None:
        return False
    git = project / ".git"
    return not git.is_symlink() and (git / "refs").is_dir()


def _unrecorded_reason(spec: ToolSpec, tool_input: Mapping[str, Any],
                       path_subjects: Sequence[str], ctx: ToolContext) -> str:
    """Why the call would change what the newest checkpoint does not record ("" if nothing
    says so). Such paths are read-only to a call that runs unasked, so it would fail there."""
    if needs_unrecorded(ctx.session, spec.name, tool_input):
        return "the same call failed before because it needed to change files checkpoints " \
               "do not record"
    coverage = ctx.session.get(COVERAGE_KEY)
    if not isinstance(coverage, Coverage):
        return ""
    if not coverage.protectable:
        return "the project has too many files checkpoints do not record to keep them " \
               "read-only"
    for path in path_subjects:
        entry = coverage.entry_for(path)
        if entry is not None:
            return f"checkpoints do not record {entry} (ignored, too large, special, or a " \
                   "repository of its own)"
    return ""


def _destination(spec: ToolSpec, tool_input: Mapping[str, Any], claims: ServerClaims) -> str:
    url = tool_input.get("url")
    if isinstance(url, str):
        try:
            host = urlsplit(url.strip()).hostname
        except ValueError:
            host = None
        if host:
            return host
    if not spec.server_id or spec.server_id in BUILTIN_SERVERS:
        if spec.needs_network:
            return "the web (through " + spec.name + ")"
        return "the network"
    if claims.open_world:
        return f"the {spec.server_id} server and beyond (its server says the tool reaches an " \
               "open world)"
    return f"the {spec.server_id} server"

