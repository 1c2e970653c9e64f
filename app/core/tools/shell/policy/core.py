"""The capability check itself: PolicyResult, check_command and the per-program dispatch."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from app.core.tools.shell.policy._helpers import Checker
from app.core.tools.shell.policy.build_tools import BUILD_CHECKERS
from app.core.tools.shell.policy.files import FILE_CHECKERS
from app.core.tools.shell.policy.git import GIT_CHECKERS
from app.core.tools.shell.policy.network import NETWORK_CHECKERS
from app.core.tools.shell.policy.refused import _INTERACTIVE, _META, ALWAYS_REFUSED, BUILTINS
from app.core.tools.shell.policy.text_tools import TEXT_CHECKERS
from app.core.tools.shell.policy.wrappers import _WRAPPERS, _check_wrapper
from app.core.tools.shell.syntax import ParsedCommand, SimpleCommand, parse_command


@dataclass
class PolicyResult:
    parsed: ParsedCommand
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.parsed.ok and not self.problems

    def all_problems(self) -> list[str]:
        return [*self.parsed.problems, *self.problems]

    def error_message(self, allowed_commands: Iterable[str] = ()) -> str:
        """What the model reads when the command is refused: every reason and what to do."""
        if not self.parsed.ok:
            return self.parsed.error_message()
        allowed = ", ".join(sorted(set(allowed_commands))) or "(none)"
        lines = "\n".join(f"- {p}" for p in self.problems)
        return (f"The command was not run:\n{lines}\nAllowed programs: {allowed} (plus the "
                "builtins cd and pwd). Other programs can be enabled in the shell_exec tool's "
                "configuration by the user.")


def check_command(command: str | ParsedCommand, allowed_commands: Iterable[str]) -> PolicyResult:
    """Check a whole command line against the allowlist and the refusal tables."""
    parsed = command if isinstance(command, ParsedCommand) else parse_command(command)
    result = PolicyResult(parsed)
    allowed = frozenset(allowed_commands)
    for step in parsed.steps:
        cmds = step.pipeline.commands
        for cmd in cmds:
            for problem in check_words(cmd.words, allowed, in_pipeline=len(cmds) > 1):
                if problem not in result.problems:
                    result.problems.append(problem)
    return result


def check_structure(command: str | ParsedCommand) -> PolicyResult:
    """Only what the runner itself needs: the command parses and ``cd``/``pwd`` are used as the
    executor supports them. For shell_exec's "any program, sandboxed" level, where the OS
    sandbox, not the allowlist, is the wall."""
    parsed = command if isinstance(command, ParsedCommand) else parse_command(command)
    result = PolicyResult(parsed)
    for step in parsed.steps:
        cmds = step.pipeline.commands
        for cmd in cmds:
            if cmd.words and cmd.words[0] in BUILTINS:
                for problem in _check_builtin(cmd.words[0], list(cmd.words[1:]), len(cmds) > 1):
                    if problem not in result.problems:
                        result.problems.append(problem)
    return result


def check_simple(cmd: SimpleCommand, allowed_commands: Iterable[str]) -> list[str]:
    return check_words(cmd.words, frozenset(allowed_commands))


def check_words(words: Sequence[str], allowed: frozenset[str], *, in_pipeline: bool = False,
                _depth: int = 0) -> list[str]:
    """Problems of one simple command (empty list: it may run)."""
    if not words:
        return ["empty command"]
    program, args = words[0], list(words[1:])
    if program in BUILTINS:
        return _check_builtin(program, args, in_pipeline)
    if program in ALWAYS_REFUSED:
        return [f"`{program}` is not allowed: {program} {ALWAYS_REFUSED[program]}"
                if ALWAYS_REFUSED[program] in (_META, _INTERACTIVE)
                else f"`{program}` is not allowed: {ALWAYS_REFUSED[program]}"]
    if program not in allowed:
        if "/" in program:
            base = program.rstrip("/").rsplit("/", 1)[-1]
            hint = (f"; call it by its name `{base}` instead of a path" if base in allowed
                    else "")
            return [f"`{program}` is not on the allowed command list (programs are matched by "
                    f"exact name, a path is not the program's name){hint}"]
        return [f"`{program}` is not on the allowed command list"]
    # An explicitly allowlisted path (e.g. ./gradlew) is checked like the program it names.
    name = program.rstrip("/").rsplit("/", 1)[-1] if "/" in program else program
    if name in _WRAPPERS:
        return _check_wrapper(name, args, allowed, in_pipeline, _depth, check_words)
    checker = _CHECKERS.get(name)
    if checker is None:
        checker = _CHECKERS.get(_FAMILY.get(name, ""))
    return checker(name, args) if checker is not None else []


# --- builtins -----------------------------------------------------------------------------

def _check_builtin(program: str, args: list[str], in_pipeline: bool) -> list[str]:
    if in_pipeline:
        return [f"`{program}` cannot be part of a pipeline; use it on its own, e.g. "
                f"`{program} dir && ls`"]
    if program == "pwd":
        bad = [a for a in args if a not in ("-L", "-P")]
        return [f"pwd takes no arguments (got {bad[0]!r})"] if bad else []
    rest = args[1:] if args[:1] == ["--"] else args
    if len(rest) > 1:
        return ["cd takes one directory"]
    if rest and rest[0].startswith("-"):
        return [f"cd option {rest[0]!r} is not supported; give a directory inside the project"]
    return []


_CHECKERS: dict[str, Checker] = {
    **FILE_CHECKERS,
    **NETWORK_CHECKERS,
    **BUILD_CHECKERS,
    **TEXT_CHECKERS,
    **GIT_CHECKERS,
}
# Other spellings of the same program.
_FAMILY: dict[str, str] = {
    "gsed": "sed", "gawk": "awk", "mawk": "awk", "nawk": "awk", "busybox-awk": "awk",
    "gmake": "make", "bsdtar": "tar", "gtar": "tar", "pnpm": "npm", "yarn": "npm",
    "bun": "npm", "gcc": "cc", "g++": "cc", "clang": "cc", "clang++": "cc", "c++": "cc",
    "gfind": "find", "gsort": "sort", "gtee": "tee",
}
