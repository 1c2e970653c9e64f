"""Maintainer's view of the permission checks: decide one call as Settings → Permission rules →
"Test a call" does, against the rules and settings in the app's database.

    python -m app.core.permissions check TOOL JSON [--server ID] [--project DIR]
                                         [--mode ask|auto|plan] [--flow LABEL]...
                                         [--data-dir DIR]

JSON is the call's input (``-``: read it from stdin). It prints the decision, what decided it,
a guard's reason, the facts the mode looked at and each subject with its rule: the lines of
app.core.permissions.call_check, as the Settings box shows them.

Exit status: 0 allow, 1 deny, 3 ask, 4 review; 2 when nothing was decided (input that is not
JSON, a bad argument, no usable database). 2 is argparse's status for a usage error, so "ask"
gets its own.

The database (``tebiki.sqlite3`` in ``--data-dir``, by default the app's data folder: see
app.core.config) is opened read-only: a missing one is not created and one of another schema
version is not migrated; both are reported (exit 2). Start Tebiki once to create or migrate it.
What a check does not have that the app has: MCP servers are not started (their tools, like any
tool the registry does not know, are decided by the rules alone), and default rules a tool
ships with are added by the app at its start, not here. The sandbox and sensitive paths are
the app's settings; checkpoints count as recording the project unless switched off there.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from app.core.app_sandbox import app_sandbox, app_sensitive_paths
from app.core.config import resolve_paths
from app.core.permission_mode import PermissionMode
from app.core.permissions.call_check import (
    PLAIN_TEXT,
    CallInputError,
    check_call,
    parse_call_input,
    simulated_flow,
)
from app.core.permissions.decision import DecisionContext
from app.core.permissions.flow_labels import FlowLabel
from app.core.permissions.service import ToolPermissionService
from app.core.settings_fields import CHECKPOINTS_ENABLED, SENSITIVE_PATHS
from app.core.store.db import Database, schema_version
from app.core.store.migrations import SCHEMA_VERSION
from app.core.store.settings import SettingsRepository
from app.core.tools.default_registry import custom_tools_provider, default_registry

EXIT_STATUS = {"allow": 0, "deny": 1, "ask": 3, "review": 4}
NOT_DECIDED = 2


class CheckError(Exception):
    """Why nothing could be decided, in words for the person running the check."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app.core.permissions", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    check = sub.add_parser("check", help="decide one call as Settings' \"Test a call\" does")
    check.add_argument("tool", help="the tool's name, e.g. shell_exec")
    check.add_argument("input", metavar="JSON", help="the call's input as JSON (-: stdin)")
    check.add_argument("--server", default="builtin", help="the tool's server (builtin)")
    check.add_argument("--project", type=Path, default=None,
                       help="the open project folder (default: the current folder)")
    check.add_argument("--mode", choices=[m.value for m in PermissionMode],
                       default=PermissionMode.ASK.value, help="the permission mode (ask)")
    check.add_argument("--flow", action="append", default=[], metavar="LABEL",
                       choices=[label.value for label in FlowLabel],
                       help="as if the conversation had this label (repeatable): " + "; ".join(
                           f"{label.value} = {label.label}" for label in FlowLabel))
    check.add_argument("--data-dir", type=Path, default=None,
                       help="the app's data folder (default: TEBIKI_DATA_DIR or the "
                            "platform's user data folder)")
    return parser


def open_read_only(path: Path) -> Database:
    """The database at ``path`` for reading only, at this app's schema version."""
    if not path.is_file():
        raise CheckError(f"No Tebiki database at {path}: start Tebiki once with this data "
                         "folder, or name another with --data-dir.")
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                           check_same_thread=False, isolation_level=None, timeout=10.0)
    db = Database(conn)
    try:
        version = schema_version(db)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise CheckError(f"Cannot read the database at {path}: {exc}") from exc
    if version != SCHEMA_VERSION:
        conn.close()
        advice = "update Tebiki" if version > SCHEMA_VERSION else \
            "open it with Tebiki once, which migrates it"
        raise CheckError(f"The database at {path} has schema version {version}, this Tebiki "
                         f"reads version {SCHEMA_VERSION}: {advice}.")
    return db


def permission_service(db: Database, data_dir: Path,
                       project: Path) -> tuple[ToolPermissionService, SettingsRepository]:
    """The permission service as the app builds it (app.core.services), without writing:
    the built-in and custom tools, the app's sandbox and sensitive paths."""
    settings = SettingsRepository(db)
    sandbox = app_sandbox(settings, data_dir)
    registry = default_registry()
    registry.register_provider(custom_tools_provider(data_dir, project))
    sensitive = app_sensitive_paths(sandbox, settings.read(SENSITIVE_PATHS))
    return ToolPermissionService(db, registry=registry, project_root=project, sandbox=sandbox,
                                 sensitive=sensitive), settings


def run_check(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.input == "-" else args.input
    try:
        tool_input = parse_call_input(text)
    except CallInputError as exc:
        raise CheckError(str(exc)) from exc
    project = (args.project or Path.cwd()).expanduser().resolve()
    if not project.is_dir():
        raise CheckError(f"No project folder at {project}.")
    paths = resolve_paths(args.data_dir)
    data_dir = paths.data_dir
    db = open_read_only(paths.database)
    try:
        permissions, settings = permission_service(db, data_dir, project)
        context = DecisionContext(
            mode=PermissionMode(args.mode), flow=simulated_flow(FlowLabel(v) for v in args.flow),
            checkpoints=settings.read(CHECKPOINTS_ENABLED))
        found = permissions.registry.get(args.tool)
        if found is None or found.spec.server_id != args.server:
            print(f"note: {args.server}/{args.tool} is not a tool known here (MCP servers are "
                  "not started): only the rules decide it.", file=sys.stderr)
        result = check_call(permissions, args.server, args.tool, tool_input, context)
    finally:
        db.close()
    for line in result.lines():
        print(line.render(PLAIN_TEXT))
    return EXIT_STATUS[result.decision.kind]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return run_check(args)
    except CheckError as exc:
        print(f"{args.action}: {exc}", file=sys.stderr)
        return NOT_DECIDED


if __name__ == "__main__":
    sys.exit(main())
