"""Option-parsing helpers shared by the per-program checkers."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from app.core.tools.options import OptionTable, ParsedArgs, parse_args

# A per-program checker: (program name, arguments) -> problems (empty: it may run).
Checker = Callable[[str, list[str]], list[str]]


def _parse(name: str, table: OptionTable, args: Sequence[str]) -> tuple[ParsedArgs, list[str]]:
    """Parse with ``table``; a parse error is itself a refusal (the program would reject it, or
    read it in a way we cannot predict)."""
    parsed = parse_args(table, args)
    if parsed.error:
        return parsed, [f"`{name}` option not supported here: {parsed.error}"]
    return parsed, []


def _refused(name: str, parsed: ParsedArgs, refused: Iterable[str], reason: str) -> list[str]:
    hit = parsed.find(*refused)
    return [f"`{name} {hit}` is not allowed: {reason}"] if hit is not None else []


def _simple(table: OptionTable, refused: Iterable[str], reason: str) -> Checker:
    """A checker that only refuses some options (by canonical name, whatever the spelling)."""
    names = tuple(refused)

    def check(name: str, args: list[str]) -> list[str]:
        parsed, problems = _parse(name, table, args)
        return problems or _refused(name, parsed, names, reason)
    return check


_RUNS = "it makes the program run other programs"
_WRITES = "it writes files outside the file tools' checks; use write_file / edit_file instead"
