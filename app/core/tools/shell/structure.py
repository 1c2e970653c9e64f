"""What :func:`app.core.tools.shell.syntax.parse_command` returns: simple commands, pipelines
and the and-or chain that joins them, plus the problems that refuse a command."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SimpleCommand:
    """One program invocation: ``words[0]`` is the program, the rest its arguments."""

    words: list[str]
    text: str

    @property
    def program(self) -> str:
        return self.words[0] if self.words else ""

    @property
    def subject(self) -> str:
        """Words joined by single spaces: what permission rules are matched against."""
        return " ".join(self.words)


@dataclass
class Pipeline:
    """Commands whose stdout feeds the next one's stdin (``a | b | c``)."""

    commands: list[SimpleCommand]


@dataclass
class ChainStep:
    """A pipeline and the operator that joins it to the previous step.

    ``op`` is None for the first step, else ``"&&"``, ``"||"`` or ``";"`` (a newline counts as
    ``";"``). Evaluated left to right like bash and-or lists: ``&&`` runs when the last status
    was 0, ``||`` when it was not, ``;`` always.
    """

    op: str | None
    pipeline: Pipeline


@dataclass
class ParsedCommand:
    source: str
    steps: list[ChainStep] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # Commands found inside refused constructs ($(...), subshells, if bodies, ...). They never
    # run, but deny rules must still see them.
    nested: list[SimpleCommand] = field(default_factory=list)

    @property
    def commands(self) -> list[SimpleCommand]:
        return [c for step in self.steps for c in step.pipeline.commands]

    @property
    def ok(self) -> bool:
        return not self.problems and bool(self.steps)

    def all_commands(self) -> list[SimpleCommand]:
        """Top-level and nested commands: everything a deny rule should be able to see."""
        return self.commands + self.nested

    def error_message(self) -> str:
        """A message for the model: what was refused and how to rewrite the command."""
        lines = "\n".join(f"- {p}" for p in self.problems)
        return (
            "The command was not run because it uses shell features this tool does not support "
            "(commands are executed directly, without a shell):\n" + lines + "\n"
            "Use plain commands joined by &&, ||, ; or |, with literal arguments in quotes "
            "where needed."
        )
