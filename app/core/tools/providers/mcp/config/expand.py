"""MCP server configuration: a server's entry with its ``${VAR}`` references expanded, when
it starts (``expand_server_config``), and the warnings for references that would not expand,
when it is saved (``reference_warnings``).

Separate from the validation (``mcp.config.schema``) because this runs against the environment
at start, not against the text of the configuration; the reference syntax itself is
``mcp.config.env``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace

from app.core.tools.providers.mcp.config.env import expand_value
from app.core.tools.providers.mcp.config.model import (
    SECRET_PLACEHOLDER,
    McpConfigError,
    McpServerConfig,
)

__all__ = ["expand_server_config", "reference_warnings", "resolve_values"]


def expand_server_config(cfg: McpServerConfig,
                         environ: Mapping[str, str] | None = None) -> McpServerConfig:
    """``cfg`` with every reference in args, env, headers, url and cwd expanded.

    Raises McpConfigError naming the server and every field that cannot be provided (an unset
    variable, a malformed reference, a keyring value that could not be read), so a server
    never starts with a silently unexpanded or empty value.
    """
    environ = os.environ if environ is None else environ
    errors: list[str] = []
    where = f"server {cfg.name!r}"

    def expand(field: str, value: str) -> str:
        try:
            return expand_value(value, environ)
        except ValueError as exc:
            errors.append(f"{where}: {field} {exc}")
            return value

    def expand_map(kind: str, values: Mapping[str, str]) -> dict[str, str]:
        try:
            return resolve_values(values, f"{where}: {kind}", environ)
        except McpConfigError as exc:
            errors.extend(exc.errors)
            return {}

    args = tuple(expand(f"args[{i}]", arg) for i, arg in enumerate(cfg.args))
    env = expand_map("env", cfg.env)
    headers = expand_map("headers", cfg.headers)
    url = expand("url", cfg.url) if cfg.url is not None else None
    cwd = expand("cwd", cfg.cwd) if cfg.cwd is not None else None
    if errors:
        raise McpConfigError(errors)
    return replace(cfg, args=args, env=env, headers=headers, url=url, cwd=cwd)


def reference_warnings(cfg: McpServerConfig,
                       environ: Mapping[str, str] | None = None) -> list[str]:
    """What would stop ``cfg`` from starting in this environment (unset variables, malformed
    references), for warnings when the configuration is saved; keyring values are skipped."""
    public = replace(cfg, env={k: v for k, v in cfg.env.items() if v != SECRET_PLACEHOLDER},
                     headers={k: v for k, v in cfg.headers.items() if v != SECRET_PLACEHOLDER})
    try:
        expand_server_config(public, environ)
    except McpConfigError as exc:
        return [f"{error} (the server will not start until this is fixed)"
                for error in exc.errors]
    return []


def resolve_values(values: Mapping[str, str], what: str,
                   environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Expand references in ``values``; refuse unreadable keyring values.

    Raises McpConfigError naming every value that cannot be provided, so a server never starts
    with a silently empty token.
    """
    environ = os.environ if environ is None else environ
    out: dict[str, str] = {}
    errors: list[str] = []
    for key, value in values.items():
        if value == SECRET_PLACEHOLDER:
            errors.append(f"{what} {key} is stored in the OS keyring, but it could not be read "
                          "(is the keyring unlocked?); enter the value again in Settings → MCP "
                          "servers")
            continue
        try:
            out[key] = expand_value(value, environ)
        except ValueError as exc:
            errors.append(f"{what} {key} {exc}")
    if errors:
        raise McpConfigError(errors)
    return out
