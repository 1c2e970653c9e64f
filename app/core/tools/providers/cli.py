"""CLI provider: grep_search on ripgrep and glob_search on fd.

Why a provider when the built-in grep_search already uses ``rg`` when it finds one: this one
finds the programs under configurable names or paths (Debian installs fd as ``fdfind``), only
trusts absolute PATH entries outside any project, checks that the version is new enough for the
flags used, runs the folder walk of glob_search on fd's parallel walker, tells the UI which
program serves a tool, and says what to install when a program is missing (``suggestions()``).

The tools it serves keep the built-ins' names, input schemas, ToolSpecs (``server_id`` stays
``"builtin"``, so permission rules written for the built-ins keep deciding these calls) and
output format, so routing by priority swaps them transparently. The built-in tools are handed
in (``builtin_tools``; app.core.tools.default_registry does it): providers do not import the
built-in tool modules.

- grep_search: the built-in tool run with ``rg_path`` set to the detected ripgrep. Same argv
  hardening (``--no-config``, pattern after ``--regexp``, ``--`` before the path, no
  ``--pre``), same parsing and formatting; patterns only Python's ``re`` understands still fall
  back to the Python backend. An explicit ``use_rg = "never"`` or ``rg_path`` in the tool's
  configuration still wins.
- glob_search: fd lists the entries (``--hidden``, ``.git`` excluded, symlinks not followed,
  ``--max-depth`` when the pattern has no ``**``; no pattern is passed to fd, it runs with the
  search folder as its working directory), and the same glob matcher, stat, sort and output code
  as the built-in does the rest. Cases without a walk (a plain path, a missing folder) are
  answered by the built-in itself. fd older than 8.7 honours .gitignore only inside git
  repositories, so outside one the built-in walker serves the call. Known differences from the
  built-in walker: fd reads ``.fdignore`` and ``.git/info/exclude`` but not ``.rgignore``.

Finding the programs and probing their versions (also the probes started early at start-up)
is ``providers.cli_detect``; this module is the provider and the two tools it serves.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import stat
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.globs import compile_glob, has_glob_magic
from app.core.sandbox import SandboxRequired
from app.core.tools.arguments import ToolInputError
from app.core.tools.base import Tool, ToolContext, ToolResult
from app.core.tools.fs.errors import FsError
from app.core.tools.fs.paths import visible_name
from app.core.tools.fs.scope import ScopedFs
from app.core.tools.glob_listing import format_glob_results, parse_glob_args, split_pattern
from app.core.tools.process_runner import OutputBuffer, minimal_env, run_steps
from app.core.tools.providers.base import ProviderPriority
from app.core.tools.providers.cli_detect import (
    PROGRAM_INFO,
    DetectedProgram,
    detect_program,
    end_early_probes,
    install_hint,
    normalise_aliases,
)
from app.core.tools.shell.syntax import ChainStep, Pipeline, SimpleCommand

__all__ = [
    "CliGlobSearchTool",
    "CliGrepSearchTool",
    "CliProvider",
]

FD_NO_REQUIRE_GIT = (8, 7)
MAX_FD_OUTPUT_BYTES = 64 * 1024 * 1024


class CliProvider:
    """Serves grep_search/glob_search backed by rg/fd when they are installed.

    Detection runs once (``shutil.which`` on an absolute-only PATH, then ``--version``) and is
    cached; ``reload()`` detects again (call ``registry.refresh()`` afterwards).
    """

    id = "cli"
    priority = int(ProviderPriority.CLI)

    def __init__(self, aliases: Mapping[str, str | Sequence[str]] | None = None, *,
                 builtin_tools: Mapping[str, Tool], search_path: str | None = None,
                 suggest_enhanced_tools: bool = True, platform: str | None = None) -> None:
        self.aliases = normalise_aliases(aliases)
        # The built-in grep_search and glob_search by name: what the CLI tools run on or fall
        # back to.
        self._builtin_tools = dict(builtin_tools)
        self._search_path = search_path
        self.suggest_enhanced_tools = suggest_enhanced_tools
        self._platform = platform or sys.platform
        self._lock = threading.Lock()
        self._detected: dict[str, DetectedProgram] | None = None
        self._tools: list[Tool] = []

    # -- detection -----------------------------------------------------------------------

    def detect(self) -> dict[str, DetectedProgram]:
        with self._lock:
            if self._detected is None:
                try:
                    self._detected = {p: detect_program(p, names, self._search_path)
                                      for p, names in self.aliases.items()}
                finally:
                    end_early_probes()
                self._tools = self._build_tools(self._detected, self._builtin_tools)
            return dict(self._detected)

    def reload(self) -> dict[str, DetectedProgram]:
        """Forget what was detected and look again (after installing rg or fd)."""
        with self._lock:
            self._detected = None
        return self.detect()

    @staticmethod
    def _build_tools(detected: Mapping[str, DetectedProgram],
                     builtin_tools: Mapping[str, Tool]) -> list[Tool]:
        tools: list[Tool] = []
        rg, fd = detected.get("rg"), detected.get("fd")
        grep, glob = builtin_tools.get("grep_search"), builtin_tools.get("glob_search")
        if rg is not None and rg.path is not None and grep is not None:
            tools.append(CliGrepSearchTool(rg.path, grep))
        if fd is not None and fd.path is not None and fd.version is not None and \
                glob is not None:
            tools.append(CliGlobSearchTool(fd.path, fd.version, glob))
        return tools

    # -- ToolProvider --------------------------------------------------------------------

    @property
    def display_name(self) -> str:
        found = [PROGRAM_INFO[p][0] for p, d in self.detect().items() if d.path is not None]
        return f"CLI tools ({', '.join(found)})" if found else "CLI tools"

    def is_available(self) -> bool:
        return any(d.path is not None for d in self.detect().values())

    def tools(self) -> Sequence[Tool]:
        self.detect()
        return list(self._tools)

    def suggestions(self) -> list[str]:
        """Install hints for the programs that are missing (or too old), for the UI."""
        if not self.suggest_enhanced_tools:
            return []
        out = []
        for program, found in self.detect().items():
            if found.path is not None:
                continue
            label, tool = PROGRAM_INFO[program]
            why = found.problem or f"not found (looked for: {', '.join(found.tried)})"
            out.append(f"Install {label} for a faster {tool}: "
                       f"{install_hint(program, self._platform)}. {label}: {why}.")
        return out


# -- grep_search on ripgrep ---------------------------------------------------------------------

class CliGrepSearchTool:
    """The built-in grep_search, pinned to the detected ripgrep binary."""

    def __init__(self, rg_path: str, builtin: Tool) -> None:
        self.rg_path = rg_path
        self._inner = builtin
        self.spec = builtin.spec

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        cfg = dict(ctx.config_for("grep_search"))
        cfg.setdefault("rg_path", self.rg_path)
        pinned = dataclasses.replace(ctx, tool_config={**ctx.tool_config, "grep_search": cfg})
        return await self._inner.execute(input, pinned)


# -- glob_search on fd --------------------------------------------------------------------------

@dataclass(frozen=True)
class _Plan:
    base: Path
    shown_base: str
    rest: str
    rx: re.Pattern[str]
    max_depth: int | None


def _in_git_tree(path: Path) -> bool:
    return any(os.path.lexists(p / ".git") for p in (path, *path.parents))


class CliGlobSearchTool:
    """glob_search whose folder walk runs on fd; matching and output are the built-in's."""

    def __init__(self, fd_path: str, fd_version: tuple[int, ...], builtin: Tool) -> None:
        self.fd_path = fd_path
        self.fd_version = fd_version
        self._builtin = builtin  # answers what needs no walk, and when fd cannot run
        self.spec = builtin.spec

    async def execute(self, input: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            pattern, base_dir, max_results = parse_glob_args(input)
        except (ToolInputError, FsError):
            return await self._builtin.execute(input, ctx)  # same message as the built-in
        cfg = ctx.config_for("glob_search")
        if cfg.get("use_fd") in (False, "never"):
            return await self._builtin.execute(input, ctx)
        fs = ScopedFs.from_context(ctx)
        try:
            plan = await asyncio.to_thread(self._plan, fs, pattern, base_dir)
        except FsError:
            plan = None
        if plan is None:  # no walk needed, or an error: the built-in answers identically
            return await self._builtin.execute(input, ctx)
        timeout = float(cfg.get("timeout_s", ctx.shell_timeout_s))
        listing = await self._run_fd(plan, timeout, ctx)
        if listing is None:  # fd could not run (removed since detection? the sandbox is
            # required and missing?): walk in Python
            return await self._builtin.execute(input, ctx)
        names, stopped, errors = listing
        found = await asyncio.to_thread(_match_and_stat, plan, names)
        return ToolResult.ok(_format(found, plan, max_results, stopped, errors))

    def _plan(self, fs: ScopedFs, pattern: str, base_dir: str | None) -> _Plan | None:
        base_abs, rest = split_pattern(pattern, base_dir, fs.project_root)
        base = fs.resolve(base_abs)
        if not has_glob_magic(rest) or not base.is_dir():
            return None
        if self.fd_version < FD_NO_REQUIRE_GIT and not _in_git_tree(base):
            return None  # this fd would ignore .gitignore files here
        try:
            rx = compile_glob(rest)
        except Exception:
            return None
        max_depth = None if "**" in rest else rest.count("/") + 1
        return _Plan(base, fs.display(base), rest, rx, max_depth)

    def argv(self, plan: _Plan) -> list[str]:
        """fd gets no user text at all: the folder is its cwd, the glob is matched here."""
        argv = [self.fd_path, "--hidden", "--exclude", ".git", "--print0", "--color", "never",
                "--show-errors", "--strip-cwd-prefix"]
        if self.fd_version >= FD_NO_REQUIRE_GIT:
            argv.append("--no-require-git")
        if plan.max_depth is not None:
            argv += ["--max-depth", str(plan.max_depth)]
        return argv

    async def _run_fd(self, plan: _Plan, timeout: float, ctx: ToolContext
                      ) -> tuple[list[str], str | None, list[str]] | None:
        try:
            # fd only lists names: it writes nowhere and needs no network, and hidden folders
            # (~/.ssh, ...) stay hidden from it as from every other program.
            confinement = ctx.confine(read_only=(plan.base,))
        except SandboxRequired:
            return None
        out = OutputBuffer(MAX_FD_OUTPUT_BYTES)
        argv = self.argv(plan)
        with tempfile.TemporaryDirectory(prefix="tebiki-fd-") as empty_home:
            # An empty HOME/XDG_CONFIG_HOME: no global gitignore or fd ignore file applies,
            # as the built-in walker (and rg's --no-ignore-global) ignore them too.
            env = minimal_env({"HOME": empty_home, "XDG_CONFIG_HOME": empty_home})
            step = ChainStep(None, Pipeline([SimpleCommand(argv, " ".join(argv))]))
            result = await run_steps([step], cwd=plan.base, root=plan.base, timeout_s=timeout,
                                     max_output_bytes=64 * 1024, env=env, stdout_buffer=out,
                                     confinement=confinement)
        if not result.timed_out and (result.exit_code == 127 or (
                result.exit_code not in (0, 1) and not out.total)):
            return None
        raw = bytes(out.head)
        stopped = None
        if out.dropped > 0 or result.timed_out:
            raw = raw[: raw.rfind(b"\0") + 1]  # the last name may be cut
            stopped = (f"stopped at the {timeout:g} s limit" if result.timed_out else
                       f"stopped after {MAX_FD_OUTPUT_BYTES // (1 << 20)} MB of paths")
        names = [os.fsdecode(n) for n in raw.split(b"\0") if n]
        errors = [ln.removeprefix("[fd error]: ") for ln in result.stderr.splitlines()
                  if ln.startswith("[fd error]")]
        return names, stopped, errors


def _match_and_stat(plan: _Plan, names: Sequence[str]) -> list[tuple[float, str]]:
    prefix = "" if plan.shown_base == "." else plan.shown_base.rstrip("/") + "/"
    found: list[tuple[float, str]] = []
    base = str(plan.base)
    for name in names:
        rel = name.removeprefix("./").rstrip("/")
        if not rel or plan.rx.fullmatch(rel) is None:
            continue
        path = os.path.join(base, rel)
        try:
            lst = os.lstat(path)
        except OSError:
            continue  # vanished since fd listed it
        try:
            mtime = os.stat(path).st_mtime
        except OSError:  # dangling symlink
            mtime = lst.st_mtime
        is_dir = stat.S_ISDIR(lst.st_mode)
        # Escaped like the built-in's: a name with a newline must not read as two files.
        found.append((mtime, visible_name(prefix + rel) + ("/" if is_dir else "")))
    return found


def _format(found: list[tuple[float, str]], plan: _Plan, max_results: int,
            stopped: str | None, errors: list[str]) -> str:
    """The built-in glob_search's output format, line for line."""
    return format_glob_results(found, plan.rest, visible_name(plan.shown_base), max_results,
                               stopped, errors)
