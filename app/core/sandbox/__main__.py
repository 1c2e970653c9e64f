"""Maintainer's view of the sandbox: run a command the way a tool runs it, or print what it sees.

    python -m app.core.sandbox run [--project DIR] [--write DIR]... [--read-only DIR]...
                                   [--network] -- CMD ARGS
    python -m app.core.sandbox show [--project DIR] [--write DIR]... [--network]

``run`` uses the machine's sandbox (the one a tool gets without the app's settings), the same
mounts and the same environment a command tool's program gets (minus the git settings that
shell_exec adds for git), and exits with the program's status.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from app.core.sandbox.confinement import Confinement, Sandbox, machine_sandbox
from app.core.sandbox.environment import minimal_env
from app.core.sandbox.view import format_view, project_confinement, sandbox_view


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app.core.sandbox", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    for name in ("run", "show"):
        cmd = sub.add_parser(name)
        cmd.add_argument("--project", type=Path, default=Path.cwd())
        cmd.add_argument("--write", type=Path, action="append", default=[],
                         help="a writable folder (default: the project)")
        cmd.add_argument("--read-only", type=Path, action="append", default=[],
                         help="a folder shown read-only, like Settings → Sandbox's list")
        cmd.add_argument("--network", action="store_true")
        if name == "run":
            cmd.add_argument("command", nargs=argparse.REMAINDER)
    return parser


def _confinement(args: argparse.Namespace) -> Confinement:
    base = machine_sandbox(read_only=args.read_only)
    sandbox = Sandbox(base.status, True, base.hidden, read_only=base.read_only)
    confinement = project_confinement(sandbox, args.project, writable=args.write,
                                      network=args.network)
    assert confinement is not None  # required: confine raises when there is no sandbox
    return confinement


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    confinement = _confinement(args)
    project = args.project.resolve()
    env = minimal_env(project_root=project)
    if args.action == "show":
        print(f"sandbox: {confinement.status.summary}")
        print(format_view(sandbox_view(confinement, env=env)))
        return 0
    command = [c for c in args.command if c != "--"] if args.command[:1] == ["--"] else \
        args.command
    if not command:
        print("run: no command given (… run -- CMD ARGS)", file=sys.stderr)
        return 2
    executable = shutil.which(command[0], path=env.get("PATH")) or command[0]
    program, wrapped, clean = confinement.launch(command, os.path.abspath(executable),
                                                 project, env)
    done = subprocess.run(wrapped, executable=program, env=clean, cwd=project, check=False)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
