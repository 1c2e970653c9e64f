"""Tebiki's command line: its own options (``--data-dir``, ``--project``, ``--smoke-test``)
and, passed on to QApplication untouched, Qt's (``-style``, ``-platform``, ``-reverse``…)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from app.core.config import APP_ID


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=APP_ID, description="Tebiki, a desktop AI agent "
                                     "workbench")
    parser.add_argument("--data-dir", help="where the database and logs live "
                        "(default: $TEBIKI_DATA_DIR or the platform's user data dir)")
    parser.add_argument("--project", help="project folder to open (default: "
                        "$TEBIKI_PROJECT_ROOT)")
    parser.add_argument("--smoke-test", action="store_true",
                        help="start offscreen, build the main window, exit 0 (packaging check)")
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = _parser()
    # Qt's own options (-style, -platform, -reverse…) are not ours: qt_argv passes them on.
    args, unknown = parser.parse_known_args(argv)
    if args.project is None:  # the desktop entry's %F ("Open with Tebiki" on a folder)
        args.project = next(iter(_folders(unknown)), None)
    return args


def _folders(arguments: Sequence[str]) -> list[str]:
    """The arguments that name existing folders (not options, not an option's value)."""
    return [a for a in arguments if not a.startswith("-") and os.path.isdir(a)]


def qt_argv(program: str, argv: Sequence[str]) -> list[str]:
    """The command line QApplication sees: the program and every argument that is not one of
    ours (``parse_args``), so Qt's own options (``-style fusion``, ``-platform xcb``,
    ``-reverse``) take effect."""
    _args, unknown = _parser().parse_known_args(argv)
    folders = set(_folders(unknown))
    return [program, *(a for a in unknown if a not in folders)]
