"""Compatibility re-exports: this module was split by responsibility (see ``app.core.tools.fs``).

Import from the new homes instead; this shim exists only while the tool modules that still
import from here are being converted, and will be deleted after.

- scope and reads: ``app.core.tools.fs.scope``; race-safe writes: ``app.core.tools.fs.writer``
- path text and errors: ``app.core.tools.fs.paths``, ``app.core.tools.fs.errors``
- .gitignore-aware walking: ``app.core.tools.fs.walker``
- the glob dialect: ``app.core.globs``; dict-argument helpers: ``app.core.tools.arguments``
"""

from __future__ import annotations

from app.core.globs import (
    compile_glob,
    gitignore_style_matcher,
    glob_to_regex,
    has_glob_magic,
)
from app.core.tools.arguments import (
    ToolInputError,
    arg_bool,
    arg_int,
    arg_str,
    path_subjects,
    unknown_args,
)
from app.core.tools.fs.errors import (
    FsError,
    InvalidPathError,
    IsADirectoryFsError,
    NotFoundError,
    OutsideScopeError,
    WriteConflictError,
)
from app.core.tools.fs.paths import (
    MAX_PATH_CHARS,
    absolute_path,
    check_path_text,
    describe_os_error,
    display_path,
    is_within,
    printable,
    resolve_for_subject,
    resolve_path,
)
from app.core.tools.fs.scope import WRITE_MODES, ScopedFs, WriteMode, read_file_fast
from app.core.tools.fs.walker import (
    IGNORE_FILES,
    GitIgnore,
    Override,
    WalkItem,
    WalkStats,
    walk_tree,
)
from app.core.tools.fs.writer import HAVE_DIR_FD, FileStamp, WritePlan, WriteReport

__all__ = [
    "HAVE_DIR_FD",
    "IGNORE_FILES",
    "MAX_PATH_CHARS",
    "WRITE_MODES",
    "FileStamp",
    "FsError",
    "GitIgnore",
    "InvalidPathError",
    "IsADirectoryFsError",
    "NotFoundError",
    "OutsideScopeError",
    "Override",
    "ScopedFs",
    "ToolInputError",
    "WalkItem",
    "WalkStats",
    "WriteConflictError",
    "WriteMode",
    "WritePlan",
    "WriteReport",
    "absolute_path",
    "arg_bool",
    "arg_int",
    "arg_str",
    "check_path_text",
    "compile_glob",
    "describe_os_error",
    "display_path",
    "gitignore_style_matcher",
    "glob_to_regex",
    "has_glob_magic",
    "is_within",
    "path_subjects",
    "printable",
    "read_file_fast",
    "resolve_for_subject",
    "resolve_path",
    "unknown_args",
    "walk_tree",
]
