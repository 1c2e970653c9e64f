"""``${VAR}`` references in MCP server settings, expanded when a server starts.

Anywhere inside a string value of ``args``, ``env``, ``headers``, ``url`` and ``cwd``:

- ``${VAR}`` is the value of ``VAR`` in Tebiki's environment; an unset variable is an error
  naming the server and the field (the literal text never reaches the server);
- ``${VAR:-default}`` is ``VAR``'s value, or ``default`` when it is unset or empty;
- ``$$`` is a literal ``$``; a ``$`` followed by anything else stays as it is (``a$b``);
- anything else starting with ``${`` (unclosed, a bad name) is an error, not passed through.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# One token: "$$", a well-formed reference (with an optional ":-default"), or a bad "${".
_TOKEN = re.compile(r"\$\$|\$\{(?:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|[^}]*\}?)")


def has_references(value: str) -> bool:
    """Whether ``value`` uses ``${...}`` (a template expanded at start, not a secret)."""
    return any(m.group(0) != "$$" for m in _TOKEN.finditer(value))


def expand_value(value: str, environ: Mapping[str, str]) -> str:
    """``value`` with its references expanded; raises ValueError saying what is wrong."""
    problems: list[str] = []

    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "$$":
            return "$"
        name, default = match.group(1), match.group(2)
        if name is None:
            problems.append(f"{token!r} is not a valid reference (write ${{NAME}} or "
                            "${NAME:-default}; $$ for a literal $)")
            return token
        found = environ.get(name)
        if default is not None:
            return found if found else default
        if found is None:
            problems.append(f"refers to ${{{name}}}, which is not set in Tebiki's environment "
                            f"(set it, or write ${{{name}:-default}}; $$ for a literal $)")
            return token
        return found

    out = _TOKEN.sub(one, value)
    if problems:
        raise ValueError("; ".join(problems))
    return out
