"""The command template (words with placeholders) and the parameters that fill it."""

from __future__ import annotations

import math
import re
import secrets
from dataclasses import dataclass
from typing import Any

from app.core.tools.shell.syntax import parse_command

_PLACEHOLDER_RE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


class TemplateError(ValueError):
    """The command template cannot be used (message says how to fix it)."""


class RenderError(ValueError):
    """The call's input cannot be turned into argv (message is for the model)."""


# -- the template ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Placeholder:
    name: str


@dataclass(frozen=True)
class Word:
    """One argv item of the template: literal text and placeholders, concatenated."""

    parts: tuple[str | Placeholder, ...]
    operand: bool = False  # after a literal "--": values may start with "-"

    @property
    def placeholders(self) -> list[str]:
        return [p.name for p in self.parts if isinstance(p, Placeholder)]

    @property
    def lone(self) -> str | None:
        """The parameter name when the word is exactly one placeholder."""
        if len(self.parts) == 1 and isinstance(self.parts[0], Placeholder):
            return self.parts[0].name
        return None


def parse_template(command: str) -> list[Word]:
    """Split a command template into words once, with shell_exec's parser.

    Placeholders are swapped for plain-character tokens before parsing, so braces never reach
    the parser and a placeholder can sit inside quotes or inside a word.
    """
    if not isinstance(command, str) or not command.strip():
        raise TemplateError("command is empty; give the program and its arguments, e.g. "
                            "command = \"gh issue view {number}\"")
    nonce = secrets.token_hex(4)
    while nonce in command:
        nonce = secrets.token_hex(4)
    marks: dict[str, str | Placeholder] = {}
    originals: dict[str, str] = {}

    def swap(m: re.Match[str]) -> str:
        token = f"tbk{nonce}x{len(marks)}x"
        text = m.group(0)
        marks[token] = Placeholder(m.group(1)) if m.group(1) else text[0]
        originals[token] = text
        return token

    text = _PLACEHOLDER_RE.sub(swap, command)
    token_re = re.compile(f"(tbk{nonce}x\\d+x)")

    def restore(s: str) -> str:
        return token_re.sub(lambda m: originals[m.group(1)], s)

    parsed = parse_command(text)
    if not parsed.ok:
        problems = "; ".join(restore(p) for p in parsed.problems) or "nothing to run"
        raise TemplateError(f"command cannot be used: {problems}. The template is split like a "
                            "shell command, but no shell runs it: quote literal * ? [ ~ $ "
                            "characters, and give one program with its arguments.")
    commands = parsed.commands
    if len(commands) != 1:
        raise TemplateError("command must be one program with its arguments; |, &&, || and ; "
                            "are not supported (no shell runs it). Wrap a pipeline in a script "
                            "and call the script.")
    words: list[Word] = []
    operand = False
    for raw in commands[0].words:
        parts: list[str | Placeholder] = []
        for piece in token_re.split(raw):
            if not piece:
                continue
            mark = marks.get(piece, piece) if token_re.fullmatch(piece) else piece
            if isinstance(mark, str) and parts and isinstance(parts[-1], str):
                parts[-1] += mark
            else:
                parts.append(mark)
        word = Word(tuple(parts), operand)
        if not words and word.placeholders:
            raise TemplateError("the program (the first word of command) must be literal, not "
                                "a placeholder: a parameter must never choose what runs.")
        if any(isinstance(p, str) and nonce in p for p in parts):
            raise TemplateError("a placeholder could not be read back after parsing; write "
                                "{name} plainly (and {{ or }} for literal braces)")
        words.append(word)
        if word.parts == ("--",):
            operand = True
    return words


# -- parameters ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Param:
    name: str
    type: str = "string"
    description: str = ""
    required: bool = False
    enum: tuple[Any, ...] | None = None
    default: Any = None
    flag: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    allow_leading_dash: bool = False

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.description:
            out["description"] = self.description
        if self.enum is not None:
            out["enum"] = list(self.enum)
        if self.default is not None:
            out["default"] = self.default
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out

    def coerce(self, value: Any) -> Any:
        """Validate a value and normalise it (1.0 → 1 for integers); RenderError if bad."""
        where = f"parameter '{self.name}'"
        if self.type == "boolean":
            if not isinstance(value, bool):
                raise RenderError(f"{where} must be true or false, got {value!r}.")
            return value
        if self.type == "string":
            if not isinstance(value, str):
                raise RenderError(f"{where} must be a string, got {type(value).__name__}.")
            if "\x00" in value:
                raise RenderError(f"{where} contains a NUL character, which no command "
                                  "argument can hold. Remove it.")
        elif self.type == "integer":
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                raise RenderError(f"{where} must be an integer, got {value!r}.")
        else:  # number
            if isinstance(value, bool) or not isinstance(value, int | float) or (
                    isinstance(value, float) and not math.isfinite(value)):
                raise RenderError(f"{where} must be a finite number, got {value!r}.")
        if self.type in ("integer", "number"):
            if self.minimum is not None and value < self.minimum:
                raise RenderError(f"{where} must be at least {self.minimum:g}, got {value}.")
            if self.maximum is not None and value > self.maximum:
                raise RenderError(f"{where} must be at most {self.maximum:g}, got {value}.")
        if self.enum is not None and value not in self.enum:
            raise RenderError(f"{where} must be one of {', '.join(map(repr, self.enum))}; got "
                              f"{value!r}.")
        return value

    def text(self, value: Any) -> str:
        if self.type == "boolean":
            return "true" if value else "false"
        if isinstance(value, float):
            return repr(value)  # shortest round-trip form: 0.1, 1e-07
        return str(value)

    def dash_ok(self, word: Word) -> bool:
        return word.operand or self.allow_leading_dash or self.enum is not None

