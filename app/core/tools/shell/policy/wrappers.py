"""Wrappers (timeout, nice, ...): their inner command is checked by the same rules."""

from __future__ import annotations

from collections.abc import Callable

from app.core.tools.options import WRAPPER_TABLES, unwrap

# Checks an inner command: check_words(words, allowed, in_pipeline=..., _depth=...).
WordsCheck = Callable[..., list[str]]

_MAX_WRAPPER_DEPTH = 4

# Programs that run an inner command given after their own options: check the inner one.
_WRAPPERS = frozenset(WRAPPER_TABLES)


def _check_wrapper(name: str, args: list[str], allowed: frozenset[str], in_pipeline: bool,
                   depth: int, check_words: WordsCheck) -> list[str]:
    if depth >= _MAX_WRAPPER_DEPTH:
        return [f"`{name}` wrappers nested too deeply"]
    # Parsed exactly as the wrapper parses its argv, so the inner command checked here is the
    # one that runs (an option we cannot place is refused rather than guessed).
    unwrapped = unwrap(name, args)
    if unwrapped.error:
        if unwrapped.options.error:
            return [f"`{name}` option not supported here: {unwrapped.error} (the inner command "
                    f"of {name} is checked, so only its plain options are accepted)"]
        return [unwrapped.error]
    if not unwrapped.inner:
        return []
    problems = check_words(unwrapped.inner, allowed, in_pipeline=in_pipeline, _depth=depth + 1)
    return [f"inside `{name}`: {p}" for p in problems]
