"""The ToolContext of one tool call, built from the agent profile's per-tool configuration.

Capabilities are configured per tool (the tool's Configure dialog), but ``ToolContext`` is a
single object with shared field names. So a context is built *per call*, for the tool being
called: its capability fields come only from that tool's config, never from another tool's.
Enabling ``shell_exec`` with ``allowed_commands: [make]`` therefore does not let ``self_eval``
run ``make``, and ``write_file``'s write dirs do not leak into ``edit_file``.

The capability fields a tool accepts, and how each value parses, are its spec's
``config_fields`` (``ConfigField.is_capability``): a capability the tool does not declare is
ignored. Tools that declare no fields (custom and MCP tools) accept every capability key
(``CAPABILITY_KEYS``) with the same parsing (``FALLBACK_CAPABILITY_FIELDS``); see
``ToolContext`` for the defaults.

An invalid value never widens anything: it is ignored (logged) and the safe default applies.
``tool_config`` holds every tool's *non-capability* options, keyed by tool name, so a tool can
read its own settings (web_search provider, self_eval checks) via ``ctx.config_for(name)``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from app.core.sandbox import Sandbox
from app.core.store.profiles import ToolSetting
from app.core.tools.base import GitPermission, ToolContext, ToolSpec
from app.core.tools.config_fields import CAPABILITY_KEYS, ConfigField, FieldKind

log = logging.getLogger(__name__)

# How a capability parses for a tool that declares no config fields: the same descriptors a
# built-in tool would declare, so there is one parser per kind (ConfigField.parse).
FALLBACK_CAPABILITY_FIELDS: tuple[ConfigField, ...] = (
    ConfigField("allowed_write_dirs", "Write folders", FieldKind.FOLDER_LIST),
    ConfigField("allowed_commands", "Allowed programs", FieldKind.PROGRAM_LIST),
    ConfigField("git_permission", "Git permission", FieldKind.CHOICE,
                choices=tuple((p.value, p.value) for p in GitPermission)),
    ConfigField("http_timeout_s", "HTTP timeout", FieldKind.SECONDS),
    ConfigField("shell_timeout_s", "Timeout", FieldKind.SECONDS),
    ConfigField("allow_private_network", "Private network", FieldKind.FLAG),
    ConfigField("max_output_bytes", "Output limit", FieldKind.BYTES),
)


def capability_fields(spec: ToolSpec | None) -> tuple[ConfigField, ...]:
    """The capability fields ``spec``'s config may set (all of them for a tool without fields)."""
    if spec is None or not spec.config_fields:
        return FALLBACK_CAPABILITY_FIELDS
    return tuple(f for f in spec.config_fields if f.is_capability)


def capabilities_of(config: Mapping[str, Any], fields: Iterable[ConfigField] = (
        FALLBACK_CAPABILITY_FIELDS), *, where: str = "") -> dict[str, Any]:
    """The valid capability values of one tool config for ``fields`` (invalid ones dropped,
    with a log line, so the ToolContext default applies)."""
    out: dict[str, Any] = {}
    for field in fields:
        if field.key not in config:
            continue
        value = field.parse(config[field.key])
        if value is None:
            log.warning("%sinvalid %s %r ignored; the safe default applies", where, field.key,
                        config[field.key])
            continue
        out[field.key] = value
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
    spec: ToolSpec | None = None,
    sandbox: Sandbox | None = None,
) -> ToolContext:
    """The capability boundary for a call to ``tool_name`` under this profile.

    ``session`` is the conversation's shared mutable state (shell cwd, ...); pass the same dict
    for every call of a conversation. Without ``tool_name`` every capability has its safe
    default (use that for anything that is not a specific tool's call). ``spec`` is the called
    tool's spec: its ``config_fields`` say which capabilities its config may set. ``sandbox``
    is the app's OS sandbox setting (``Services.sandbox``); None: the machine's default.
    """
    setting = tool_settings.get(tool_name) if tool_name is not None else None
    where = f"profile {profile_id}, tool {tool_name}: "
    caps = (capabilities_of(setting.config, capability_fields(spec), where=where)
            if setting is not None else {})
    if sandbox is not None:
        caps["sandbox"] = sandbox
    return ToolContext(project_root=project_root, session=session,
                       tool_config=tool_options(tool_settings), **caps)
