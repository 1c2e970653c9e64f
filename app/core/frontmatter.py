"""Markdown files that start with ``---`` frontmatter (sub-agent files, Agent Skills' SKILL.md):
the subset of YAML they use — ``key: value`` lines, a ``key:`` followed by ``- item`` lines,
``[a, b]`` lists, quoted scalars, ``#`` comments — parsed without a YAML library, and never
more: anything else is an error naming the line."""

from __future__ import annotations

from typing import Any


class FrontmatterError(ValueError):
    """The frontmatter cannot be read; the message names the file and says what is wrong."""


def split_frontmatter(text: str, source: str) -> tuple[dict[str, Any], str]:
    """(the frontmatter's keys, lower-cased, and values; the body after it)."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise FrontmatterError(f"{source}: no frontmatter (the file must start with ---)")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise FrontmatterError(f"{source}: the frontmatter has no closing ---") from None
    return _parse(lines[1:end], source), "\n".join(lines[end + 1:]).strip()


def _parse(lines: list[str], source: str) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    current: str | None = None
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        stripped = line.strip()
        if stripped.startswith("- ") and current is not None:
            items = meta.setdefault(current, [])
            if isinstance(items, list):
                items.append(_scalar(stripped[2:]))
            continue
        key, sep, value = line.partition(":")
        if not sep or not key.strip() or line[0].isspace():
            raise FrontmatterError(f"{source}: cannot read the frontmatter line {line!r}")
        current = key.strip().lower()
        value = value.split(" #", 1)[0].strip()
        if value.startswith("[") and value.endswith("]"):
            meta[current] = [_scalar(v) for v in value[1:-1].split(",") if v.strip()]
        else:
            meta[current] = _scalar(value) if value else []
    return meta


def _scalar(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value
