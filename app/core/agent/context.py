"""The ToolContext of one tool call, built from the agent profile's per-tool configuration.

Capabilities are configured per tool (the tool's Configure dialog), but ``ToolContext`` is a
single object with shared field names. So a context is built *per call*, for the tool being
called: its capability fields come only from that tool's config, never from another tool's.
Enabling ``shell_exec`` with ``allowed_commands: [make]`` therefore does not let ``self_eval``
run ``make``, and ``write_file``'s write dirs do not leak into ``edit_file``.

Capability keys (anything else in a tool's config is passed through in ``tool_config``):

=====================  =============================================  =======================
key                    meaning                                        default when absent/bad
=====================  =============================================  =======================
allowed_write_dirs     list of dirs, relative to the project or abs.  none (no writes)
allowed_commands       list of program names for shell commands       read-only list (seed)
git_permission         disabled / read_only / read_write              read_only
http_timeout_s         seconds, > 0                                   30
shell_timeout_s        seconds, > 0                                   30
allow_private_network  true / false                                   false
max_output_bytes       int, > 0                                       50,000
=====================  =============================================  =======================

An invalid value never widens anything: it is ignored (logged) and the safe default applies.
``tool_config`` holds every tool's *non-capability* options, keyed by tool name, so a tool can
read its own settings (web_search provider, self_eval checks) via ``ctx.config_for(name)``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from app.core.store.profiles import ToolSetting
from app.core.tools.base import GitPermission, ToolContext

log = logging.getLogger(__name__)

_MAX_TIMEOUT_S = 24 * 3600.0
_MAX_OUTPUT_BYTES = 100 * 1024 * 1024


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


def _commands(value: Any) -> tuple[str, ...] | None:
    items = _str_list(value)
    if items is None or any(any(ch.isspace() for ch in item) for item in items):
        return None  # a program name with spaces is a mistake, not a command line
    return items


def _git(value: Any) -> GitPermission | None:
    try:
        return GitPermission(value)
    except ValueError:
        return None


def _timeout(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        return None
    return min(value, _MAX_TIMEOUT_S)


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _size(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return min(value, _MAX_OUTPUT_BYTES)


CAPABILITY_PARSERS: dict[str, Callable[[Any], Any]] = {
    "allowed_write_dirs": _str_list,
    "allowed_commands": _commands,
    "git_permission": _git,
    "http_timeout_s": _timeout,
    "shell_timeout_s": _timeout,
    "allow_private_network": _flag,
    "max_output_bytes": _size,
}
CAPABILITY_KEYS = frozenset(CAPABILITY_PARSERS)


def capabilities_of(config: Mapping[str, Any], *, where: str = "") -> dict[str, Any]:
    """The valid capability fields of one tool config (invalid ones dropped, with a log line)."""
    out: dict[str, Any] = {}
    for key, parse in CAPABILITY_PARSERS.items():
        if key not in config:
            continue
        value = parse(config[key])
        if value is None:
            log.warning("%sinvalid %s %r ignored; the safe default applies", where, key,
                        config[key])
            continue
        out[key] = value
    return out


def tool_options(tool_settings: Mapping[str, ToolSetting]) -> dict[str, dict[str, Any]]:
    """Every tool's non-capability options, keyed by tool name."""
    return {name: {k: v for k, v in setting.config.items() if k not in CAPABILITY_KEYS}
            for name, setting in tool_settings.items()}


def build_tool_context(
    profile_id: int | None,
    tool_settings: Mapping[str, ToolSetting],
    project_root: Path,
    session: dict[str, Any],
    tool_name: str | None = None,
) -> ToolContext:
    """The capability boundary for a call to ``tool_name`` under this profile.

    ``session`` is the conversation's shared mutable state (shell cwd, ...); pass the same dict
    for every call of a conversation. Without ``tool_name`` every capability has its safe
    default (use that for anything that is not a specific tool's call).
    """
    setting = tool_settings.get(tool_name) if tool_name is not None else None
    where = f"profile {profile_id}, tool {tool_name}: "
    caps = capabilities_of(setting.config, where=where) if setting is not None else {}
    return ToolContext(working_dir=project_root, session=session,
                       tool_config=tool_options(tool_settings), **caps)
