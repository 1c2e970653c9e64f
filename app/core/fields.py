"""Field declarations: what a form shows for a value (label, kind, default, help) and how a
stored or typed value parses.

Why: a setting used to be known in several places (an ``if name == …`` chain in a dialog,
parsers next to its readers, a default repeated by each reader). Now each is declared once as a
field, and one generic input per kind renders it (app.ui.dialogs.field_inputs). Two families
use it: a tool's config (``ToolSpec.config_fields``, app.core.tools.config_fields: the
Configure… dialog renders them, the context builder parses them, the store takes the defaults)
and the app's settings (app.core.settings_fields: typed reads, the Settings dialog). This module
imports nothing of the app: the start path reads settings before any tool is loaded.

A field's ``parse`` never widens anything: an invalid value returns ``None`` and the caller
applies the safe default (the field's ``default``, or the ``ToolContext`` default).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

__all__ = ["Field", "FieldKind", "InvalidConfigValue"]

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
    INTEGER = "integer"            # int from ``minimum``, capped at ``maximum``
    CHOICE = "choice"              # one of ``choices`` (value, label)
    TEXT = "text"                  # free text (a command line, a URL)
    TEXT_MAP = "text_map"          # {subkey: text} for the subkeys in ``choices``
    FOLDER_LIST = "folder_list"    # folders, relative to the project or absolute
    PROGRAM_LIST = "program_list"  # program names, no paths or spaces
    TEXT_LIST = "text_list"        # texts, one per line; an entry that is no text is dropped
    MAPPING = "mapping"            # a JSON object; its reader checks the entries it uses
    RECORDS = "records"            # JSON objects in a list; an entry that is no object is dropped
    SECRET = "secret"              # kept in the OS keyring under ``secret_name``, never in config


class InvalidConfigValue(ValueError):
    """A value the person typed that cannot be saved; the message says what to fix."""


@dataclass(frozen=True)
class Field:
    """One value a form shows: a tool's config key, or an app setting."""

    key: str
    label: str
    kind: FieldKind
    default: Any = None
    help: str = ""
    # CHOICE: the allowed values with their labels; TEXT_MAP: the subkeys with their labels.
    choices: tuple[tuple[str, str], ...] = ()
    # For a spin box at its lowest value (INTEGER: "no limit" for 0), the text shown instead.
    placeholder: str = ""
    secret_name: str | None = None
    # INTEGER: the valid range (None: unbounded), in stored units, and how the input shows
    # them: ``unit`` after the number, each of which is ``unit_size`` stored units (bytes
    # stored, "MB" shown: 1024 * 1024).
    minimum: int | None = None
    maximum: int | None = None
    unit: str = ""
    unit_size: int = 1

    def value_of(self, stored: Any) -> Any:
        """The value a reader uses: ``stored`` when it is valid, else the field's default."""
        parsed = self.parse(stored)
        return self.default if parsed is None else parsed

    def parse(self, value: Any) -> Any | None:
        """The value as the tool uses it, or None when it is invalid (safe default applies)."""
        parser = _PARSERS.get(self.kind)
        if parser is None:
            raise AssertionError(f"unhandled field kind {self.kind}")
        return parser(self, value)

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


# -- one parser per kind: the value as it is used, or None when it is invalid ----------------

def _flag(_field: Field, value: Any) -> Any | None:
    return value if isinstance(value, bool) else None


def _seconds(_field: Field, value: Any) -> Any | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    seconds = float(value)
    if not math.isfinite(seconds) or seconds <= 0:
        return None
    return min(seconds, _MAX_SECONDS)


def _bytes(_field: Field, value: Any) -> Any | None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return min(value, _MAX_BYTES)


def _integer(field: Field, value: Any) -> Any | None:
    if isinstance(value, bool) or not isinstance(value, int) or \
            (field.minimum is not None and value < field.minimum):
        return None
    return value if field.maximum is None else min(value, field.maximum)


def _choice(field: Field, value: Any) -> Any | None:
    return value if any(value == v for v, _ in field.choices) else None


def _text(_field: Field, value: Any) -> Any | None:
    return value if isinstance(value, str) else None


def _text_map(field: Field, value: Any) -> Any | None:
    if not isinstance(value, Mapping):
        return None
    known = {v for v, _ in field.choices}
    return {k: v.strip() for k, v in value.items()
            if k in known and isinstance(v, str) and v.strip()}


def _folder_list(_field: Field, value: Any) -> Any | None:
    return _str_list(value)


def _program_list(_field: Field, value: Any) -> Any | None:
    items = _str_list(value)
    if items is not None and any(any(ch.isspace() for ch in item) for item in items):
        return None  # a program name with spaces is a mistake, not a command line
    return items


def _text_list(_field: Field, value: Any) -> Any | None:
    if not isinstance(value, list | tuple):
        return None
    return tuple(item.strip() for item in value if isinstance(item, str) and item.strip())


def _mapping(_field: Field, value: Any) -> Any | None:
    return dict(value) if isinstance(value, Mapping) else None


def _records(_field: Field, value: Any) -> Any | None:
    if not isinstance(value, list | tuple):
        return None
    return tuple(dict(item) for item in value if isinstance(item, Mapping))


def _secret(_field: Field, _value: Any) -> Any | None:
    return None  # secrets never live in the config


_PARSERS: dict[FieldKind, Callable[[Field, Any], Any | None]] = {
    FieldKind.FLAG: _flag, FieldKind.SECONDS: _seconds, FieldKind.BYTES: _bytes,
    FieldKind.INTEGER: _integer, FieldKind.CHOICE: _choice, FieldKind.TEXT: _text,
    FieldKind.TEXT_MAP: _text_map, FieldKind.FOLDER_LIST: _folder_list,
    FieldKind.PROGRAM_LIST: _program_list, FieldKind.TEXT_LIST: _text_list,
    FieldKind.MAPPING: _mapping, FieldKind.RECORDS: _records, FieldKind.SECRET: _secret,
}
