"""``${VAR}`` references in MCP env and header values, expanded when a server starts."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from app.core.tools.providers.mcp_config_schema import SECRET_PLACEHOLDER, McpConfigError

_ENV_REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


def env_reference(value: str) -> str | None:
    """The variable name when ``value`` is exactly ``${NAME}``, else None."""
    match = _ENV_REFERENCE.match(value)
    return match.group(1) if match else None


def resolve_values(values: Mapping[str, str], what: str,
                   environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Expand ``${VAR}`` values from Tebiki's environment; refuse unreadable keyring values.

    Raises McpConfigError naming every value that cannot be provided, so a server never starts
    with a silently empty token.
    """
    environ = os.environ if environ is None else environ
    out: dict[str, str] = {}
    errors: list[str] = []
    for key, value in values.items():
        ref = env_reference(value)
        if ref is not None:
            if ref not in environ:
                errors.append(f"{what} {key} refers to ${{{ref}}}, which is not set in Tebiki's "
                              "environment")
                continue
            out[key] = environ[ref]
        elif value == SECRET_PLACEHOLDER:
            errors.append(f"{what} {key} is stored in the OS keyring, but it could not be read "
                          "(is the keyring unlocked?); enter the value again in Settings → MCP "
                          "servers")
        else:
            out[key] = value
    if errors:
        raise McpConfigError(errors)
    return out
