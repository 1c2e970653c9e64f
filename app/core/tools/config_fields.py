"""A tool's configuration fields (``ToolSpec.config_fields``): the fields of app.core.fields,
and which of their keys set a ``ToolContext`` capability rather than an option of the tool.

The tool's Configure… dialog renders them, the context builder parses them, and the store takes
the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.fields import Field, FieldKind, InvalidConfigValue

__all__ = [
    "CAPABILITY_KEYS",
    "WALK_TIME_LIMIT_FIELD",
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


@dataclass(frozen=True)
class ConfigField(Field):
    """One setting of a tool, declared in its ToolSpec."""

    @property
    def is_capability(self) -> bool:
        return self.key in CAPABILITY_KEYS


# The tools that walk folders (glob_search, grep_search, list_directory) read the same option;
# its default is ToolContext's shell_timeout_s, what they used before the option was set.
WALK_TIME_LIMIT_FIELD = ConfigField(
    "timeout_s", "Time limit", FieldKind.SECONDS, default=30.0,
    help="How long one call may walk the folders before it stops and returns what it found.")
