"""MCP server configuration: the Claude Desktop ``mcpServers`` JSON shape, validated, and stored.

Accepted shape (what Claude Desktop's ``claude_desktop_config.json`` holds; other top-level keys
of that file are ignored)::

    {"mcpServers": {
        "<name>": {"command": "npx", "args": ["-y", "pkg"], "env": {"TOKEN": "..."}},
        "<name>": {"url": "https://host/mcp", "headers": {"Authorization": "Bearer ..."}}
    }}

Tebiki extensions, ignored by Claude Desktop: ``"type"`` (``"stdio"`` or ``"http"``; inferred
from command/url when absent), ``"cwd"``, ``"timeout"`` (seconds per tool call; otherwise the
tool's configured ``shell_timeout_s`` applies) and ``"disabled": true``. Keys that other clients
use to auto-approve tools (``autoApprove``, ``alwaysAllow``) are dropped with a warning: only
Tebiki's permission rules decide whether a call runs.

Server names are server ids for the permission rules, so a name must be one a rule can hold:
no spaces or invisible characters (``server_name_problem``; the error suggests a new name).
A stored configuration saved before that check keeps loading: such a server is listed as
failed with the message saying how to rename it, never silently dropped.

``${VAR}`` and ``${VAR:-default}`` are expanded anywhere inside the string values of args, env,
headers, url and cwd when a server starts (``$$`` is a literal ``$``); an unset variable without
a default stops that server with an error naming it and the field, and is warned about when the
configuration is parsed (see ``mcp.config.env``).

Secrets: env and header *values* often hold tokens, and secrets never go into SQLite.
``McpConfigStore`` therefore writes every env/header value to the OS keyring (one entry per
value) and keeps only ``SECRET_PLACEHOLDER`` in the settings table; the editor shows the
placeholder and keeps the stored value while it is left untouched. A value that uses a
``${VAR}`` reference (``"${TOKEN}"``, ``"Bearer ${TOKEN}"``) is not a secret: it stays in the
settings and is expanded from Tebiki's own environment when the server starts (the way to go
when no keyring is available).

Modules: ``mcp.config.model`` (the entries), ``mcp.config.schema`` (their validation),
``mcp.config.env`` (the ``${VAR}`` syntax), ``mcp.config.expand`` (an entry's references
expanded at start), ``mcp.config.claude`` (import from Claude Desktop), ``mcp.config.store``
(settings and keyring).
"""
