"""Canonical permission subjects of shell commands: rules mean what they say, however spelled.

Permission rules match their ``input_pattern`` against a tool's subjects, and the permission
service decides each subject separately and keeps the strictest result (deny > ask > allow). For
shell_exec a subject is one simple command's words joined by single spaces. Spelled literally, a
deny rule ``rm *`` would not see ``timeout 20 rm -rf x``, and ``git commit*`` would not see
``git -P commit``. So every simple command is first brought to its canonical form(s):

1. **Wrappers are transparent.** ``timeout``, ``nice``, ``nohup``, ``stdbuf`` and ``ionice``
   are unwrapped to the command they run, parsing the wrapper's own options exactly as the
   wrapper does (:func:`app.core.tools.options.unwrap`), recursively (``nice -n 5 nohup rm x``
   is ``rm x``). The wrapper itself is not a subject, so an allow rule for the inner command
   still allows it. A wrapper that runs nothing (``nice`` alone) stays as written. Called by
   path (``./timeout``) it may be another program, so its spelling is a subject as well.
2. **A wrapper whose options cannot be parsed** (an unknown option, a missing value) yields
   the full spelling *and* every possible inner command (each suffix starting at a word that
   is not an option), so a deny rule on the inner command holds whichever word it really
   starts at.
3. **git's harmless global options are dropped:** ``-P``/``--no-pager``,
   ``--no-optional-locks``, ``--literal-pathspecs`` and the other pathspec switches,
   ``--no-replace-objects``, ``--no-lazy-fetch``, ``--no-advice``. ``git -P commit`` is
   ``git commit``.
4. **git global options that change what or where git acts** (``-C``, ``-c``, ``--git-dir``,
   ``--work-tree``, ``--exec-path``, ``--namespace``, ``--config-env``, ``-p``, ...) yield
   *two* subjects: the command without them (``git commit -m x``, so a deny rule on
   ``git commit*`` holds) and the spelling with them (``git -C /elsewhere commit -m x``, so an
   allow rule on ``git commit*`` does not silently allow acting on another repository: that
   subject matches no allow rule and the call is asked about).
5. Unparseable git global options: as in 2, the full spelling plus ``git`` followed by each
   suffix starting at a non-option word.
6. Anything else is its words joined by single spaces, as before.

Because the service keeps the strictest decision, extra subjects can only make a call stricter;
canonicalisation never turns a deny into anything else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from app.core.tools.base import SubjectError
from app.core.tools.options import (
    GIT_GLOBAL_TABLE,
    GIT_HARMLESS_GLOBALS,
    WRAPPER_TABLES,
    parse_args,
    unwrap,
)
from app.core.tools.shell.syntax import parse_command

__all__ = ["canonical_subjects", "command_subjects"]

# Deeper nesting than any real command; bounds the work on adversarial input.
_MAX_DEPTH = 8
# Suffixes tried for a wrapper or git call whose options are not understood.
_MAX_GUESSES = 16
# `git --version` without a subcommand is a different command from `git`; keep it visible.
_GIT_DROPPED = GIT_HARMLESS_GLOBALS - {"--version"}


def _program_name(word: str) -> str:
    return word.rstrip("/").rsplit("/", 1)[-1] if "/" in word else word


def canonical_subjects(words: Sequence[str]) -> list[str]:
    """The canonical subject(s) of one simple command (see the module docstring)."""
    out: list[str] = []
    _expand(list(words), out, 0)
    return list(dict.fromkeys(out))  # first occurrence order, no duplicates


def _suffix_guesses(words: list[str], start: int) -> list[list[str]]:
    guesses = [words[i:] for i in range(start, len(words)) if not words[i].startswith("-")]
    return guesses[:_MAX_GUESSES]


def _expand(words: list[str], out: list[str], depth: int) -> None:
    if not words:
        return
    if depth >= _MAX_DEPTH:
        out.append(" ".join(words))
        return
    name = _program_name(words[0])
    if "/" in words[0] and name in (*WRAPPER_TABLES, "git"):
        # `./timeout` may be any program that happens to have that name: it is canonicalised
        # like the real one (a deny rule on the inner command must hold), and its literal
        # spelling is a subject too, so it is never allowed by a rule about the inner command.
        out.append(" ".join(words))
    if name in WRAPPER_TABLES:
        unwrapped = unwrap(name, words[1:])
        if unwrapped.error is None:
            if unwrapped.inner:
                _expand(unwrapped.inner, out, depth + 1)
            else:
                out.append(" ".join(words))
            return
        out.append(" ".join(words))
        for guess in _suffix_guesses(words, 1):
            _expand(guess, out, depth + 1)
        return
    if name == "git":
        _expand_git(words, out, depth)
        return
    out.append(" ".join(words))


def _expand_git(words: list[str], out: list[str], depth: int) -> None:
    parsed = parse_args(GIT_GLOBAL_TABLE, words[1:])
    if parsed.error is not None:
        out.append(" ".join(words))
        for guess in _suffix_guesses(words, 1):
            out.append(" ".join([words[0], *guess]))
        return
    rest = parsed.operands  # git stops at its subcommand: the rest is the subcommand's
    significant = [o for o in parsed.options if o.name not in _GIT_DROPPED]
    out.append(" ".join([words[0], *rest]))
    if significant:
        # The spelling with the options that matter, harmless ones removed: each such option
        # is a whole word (they take no value), so removing words is exact.
        kept = [w for w in words[1:1 + parsed.stop] if not _is_dropped_word(w)]
        out.append(" ".join([words[0], *kept, *rest]))


def _is_dropped_word(word: str) -> bool:
    parsed = parse_args(GIT_GLOBAL_TABLE, [word])
    return (parsed.error is None and not parsed.operands and bool(parsed.options)
            and all(o.name in _GIT_DROPPED for o in parsed.options))


def _canonical_all(commands: Iterable[Any]) -> list[str]:
    subjects: dict[str, None] = {}  # ordered set: long chains stay linear
    for cmd in commands:
        subjects.update(dict.fromkeys(canonical_subjects(list(cmd.words))))
    return list(subjects)


def command_subjects(command: str | Mapping[str, Any], project_root: object = None) -> list[str]:
    """Canonical permission subjects of a shell command line.

    Same contract as ``shell.syntax.command_subjects``: accepts the command or the tool input
    mapping (so it can be a ToolSpec ``subjects_fn``); raises SubjectError when the command is
    not fully understood, with ``partial`` holding the canonical subjects of every command
    that could be extracted (including ones nested in refused constructs).
    """
    if isinstance(command, Mapping):
        command = command.get("command", 0)  # 0: not a string, refused below
    if not isinstance(command, str):
        raise SubjectError("command must be a string")
    parsed = parse_command(command)
    if parsed.ok:
        return _canonical_all(parsed.commands)
    partial = _canonical_all(parsed.all_commands())
    raise SubjectError("; ".join(parsed.problems) or "command not understood", partial=partial)
