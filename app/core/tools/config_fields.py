"""Configuration field descriptors: what a tool's Configure… dialog shows and how values parse.

Why: a tool's settings used to be known in three places (an ``if name == …`` chain in the
dialog, capability parsers in the agent package, defaults in the store). Now a tool's
``ToolSpec.config_fields`` declares each setting once — label, kind, default, help — and one
generic dialog renders them, the context builder parses them, and the store takes the defaults.

A field's ``parse`` never widens anything: an invalid value returns ``None`` and the caller
applies the safe default (the field's ``default``, or the ``ToolContext`` default).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

__all__ = [
    "CAPABILITY_KEYS",
    "ConfigField",
    "FieldKind",
    "InvalidConfigValue",
]

# The ToolContext fields a tool's config may set. Everything else a tool declares is an option
# it reads itself through ``ctx.config_for(name)``.
CAPABILITY_KEYS = frozenset({
    "allowed_write_dirs", "allowed_commands", "git_permission", "http_timeout_s",
    "shell_timeout_s", "allow_private_network", "max_output_bytes",
})

_MAX_SECONDS = 24 * 3600.0
_MAX_BYTES = 100 * 1024 * 1024
_PROGRAM_NAME = re.compile(r"^[A-Za-z0-9._+-]+$")
# Folders no tool may be allowed to write to, whatever the person types.
_SYSTEM_DIRS = frozenset({"/", "/etc", "/usr", "/bin", "/sbin", "/boot", "/lib", "/var",
                          "/System", "C:\\Windows"})


class FieldKind(StrEnum):
    FLAG = "flag"                  # bool
    SECONDS = "seconds"            # positive float, capped at a day
    BYTES = "bytes"                # positive int, capped
    CHOICE = "choice"              # one of ``choices`` (value, label)
    TEXT = "text"                  # free text (a command line, a URL)
    TEXT_MAP = "text_map"          # {subkey: text} for the subkeys in ``choices``
    FOLDER_LIST = "folder_list"    # folders, relative to the project or absolute
    PROGRAM_LIST = "program_list"  # program names, no paths or spaces
    SECRET = "secret"              # kept in the OS keyring under ``secret_name``, never in config


class InvalidConfigValue(ValueError):
    """A value the person typed that cannot be saved; the message says what to fix."""


@dataclass(frozen=True)
class ConfigField:
    """One setting of a tool, declared in its ToolSpec."""

    key: str
    label: str
    kind: FieldKind
    default: Any = None
    help: str = ""
    # CHOICE: the allowed values with their labels; TEXT_MAP: the subkeys with their labels.
    choices: tuple[tuple[str, str], ...] = ()
    placeholder: str = ""
    secret_name: str | None = None

    @property
    def is_capability(self) -> bool:
        return self.key in CAPABILITY_KEYS

    def parse(self, value: Any) -> Any | None:
        """The value as the tool uses it, or None when it is invalid (safe default applies)."""
        kind = self.kind
        if kind is FieldKind.FLAG:
            return value if isinstance(value, bool) else None
        if kind is FieldKind.SECONDS:
            if isinstance(value, bool) or not isinstance(value, int | float):
                return None
            seconds = float(value)
            if not math.isfinite(seconds) or seconds <= 0:
                return None
            return min(seconds, _MAX_SECONDS)
        if kind is FieldKind.BYTES:
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                return None
            return min(value, _MAX_BYTES)
        if kind is FieldKind.CHOICE:
            return value if any(value == v for v, _ in self.choices) else None
        if kind is FieldKind.TEXT:
            return value if isinstance(value, str) else None
        if kind is FieldKind.TEXT_MAP:
            if not isinstance(value, Mapping):
                return None
            known = {v for v, _ in self.choices}
            out = {k: v.strip() for k, v in value.items()
                   if k in known and isinstance(v, str) and v.strip()}
            return out
        if kind in (FieldKind.FOLDER_LIST, FieldKind.PROGRAM_LIST):
            items = _str_list(value)
            if items is None:
                return None
            if kind is FieldKind.PROGRAM_LIST and any(
                    any(ch.isspace() for ch in item) for item in items):
                return None  # a program name with spaces is a mistake, not a command line
            return items
        if kind is FieldKind.SECRET:
            return None  # secrets never live in the config
        raise AssertionError(f"unhandled field kind {kind}")

    def check_input(self, value: Any) -> Any:
        """Validate what the person entered in the dialog; raise InvalidConfigValue to explain."""
        if self.kind is FieldKind.FOLDER_LIST:
            folders = list(value)
            for folder in folders:
                if not folder or "\x00" in folder:
                    raise InvalidConfigValue(f"{self.label}: a folder is empty or invalid.")
                if folder in _SYSTEM_DIRS or str(Path(folder).expanduser()) in _SYSTEM_DIRS:
                    raise InvalidConfigValue(
                        f"{self.label}: {folder} is a system folder; choose a project folder.")
            return folders
        if self.kind is FieldKind.PROGRAM_LIST:
            names = [str(n).strip() for n in value if str(n).strip()]
            for program in names:
                if not _PROGRAM_NAME.match(program):
                    raise InvalidConfigValue(
                        f"{self.label}: {program!r} is not a program name: write just the name "
                        "(git), without paths, arguments or spaces.")
            return sorted(set(names), key=names.index)
        parsed = self.parse(value)
        if parsed is None and self.kind is not FieldKind.SECRET:
            raise InvalidConfigValue(f"{self.label}: {value!r} is not a valid value.")
        return parsed


def _str_list(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple):
        return None
    items = []
    for item in value:
        if not isinstance(item, str):
            return None
        item = item.strip()
        if item:
            items.append(item)
    return tuple(items)
