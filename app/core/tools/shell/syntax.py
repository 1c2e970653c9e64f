"""Parse a shell command into simple commands joined by ``&&``, ``||``, ``;`` and ``|``.

Why this exists: shell_exec never hands the string to a shell. It runs the structure parsed here
(argv lists, pipes, and/or sequencing) itself, and the permission service matches rules against
each simple command (seed review finding A-2: ``ls && rm -rf /`` must not pass as ``ls``). So the
parser must *fail closed*: anything whose meaning would depend on a shell (expansion,
redirection, control flow, ...) is reported in ``problems`` and such a command never runs.

Grammar accepted (everything else is a problem)::

    command   := pipeline (("&&" | "||" | ";" | newline) pipeline)* [";"]
    pipeline  := simple ("|" simple)*
    simple    := word+                    # first word is the program
    word      := (plain char | \\char | '...' | "...")+

Decisions, documented because no shell is involved:

- ``$x`` / ``${x}`` / ``$(...)`` / backticks / ``$((...))`` / ``$'...'``: refused. Nothing would
  expand them, and passing them literally would silently differ from what the model meant.
- Unquoted glob characters ``* ? [``: refused (nothing expands them). Quote them to pass them
  literally, e.g. ``find . -name '*.py'``; use the glob_search tool to list files.
- ``~`` at a word start or after an unquoted ``=``/``:``, and brace expansion ``{a,b}`` /
  ``{1..3}``: refused for the same reason. A brace without ``,`` or ``..`` (``HEAD@{1}``) is
  literal, as in bash.
- Newlines separate commands like ``;``; inside quotes they are literal. Backslash-newline line
  continuations, ``\\r``, NUL and other control, format (bidi, zero-width) or non-ASCII space
  characters are refused anywhere: they make the text look different from what runs.
- Comments (``# ...``) are refused rather than silently dropped.

Robustness bounds (the parser runs on model output, i.e. on untrusted input, inside the app
process, so it must neither crash nor stall it):

- tree-sitter only ever sees an ASCII stand-in of the command: every non-ASCII character is
  replaced by ``/`` repeated to its UTF-8 byte length, so byte offsets are unchanged and words
  and text are read back from the original bytes. Why: the bash grammar's external scanner
  crashes the process (SIGSEGV) on some code points above ~U+60000 right after ``{``;
  keeping non-ASCII away from it is a general cure rather than a per-code-point patch. Why
  ``/``: bash treats non-ASCII bytes as plain word characters, never as identifier characters,
  and ``/`` is the same outside ``${...}`` (refused anyway). A letter would not be: tree-sitter
  would read ``é@x`` as a malformed ``NAME`` and ``日本x=1`` as an assignment, which bash does
  not. :func:`lex_word` still runs on the original text, so per-character refusals (glob,
  ``$``, bidi, ...) are unaffected; a node boundary inside a character is refused.
- Commands longer than ``MAX_COMMAND_LENGTH`` characters, or nested deeper than
  ``_MAX_NESTING`` brackets/braces/quotes/substitutions (a cheap pre-scan), are refused before
  tree-sitter sees them: its error recovery is quadratic on operator floods such as ``)))...``.
- tree-sitter gets a CPU-time budget of ``_PARSE_BUDGET_S`` (cancelled through its progress
  callback) and the tree a node cap of ``_MAX_NODES``, so the Python walkers, which are all
  iterative, do bounded work. Together they keep any input under ~50 ms (see
  tests/bench/bench_shell_policy.py); each bound yields a refusal that tells the model to
  split the command.

Where the code lives: this module bounds and runs the parse; shell.tree walks tree-sitter's tree
into the structure in shell.structure, shell.words resolves single words (lex_word), and
shell.refusals holds the messages and the refused characters, constructs and operators.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from app.core.tools.base import SubjectError
from app.core.tools.shell.refusals import _BAD_ASCII_RE, _bad_char_name
from app.core.tools.shell.structure import ChainStep, ParsedCommand, Pipeline, SimpleCommand
from app.core.tools.shell.tree import _MAX_PROBLEMS as _MAX_PROBLEMS
from app.core.tools.shell.tree import _Builder
from app.core.tools.shell.words import lex_word as lex_word

if TYPE_CHECKING:
    from tree_sitter import Language, Parser, Tree

__all__ = [
    "MAX_COMMAND_LENGTH",
    "ChainStep",
    "ParsedCommand",
    "Pipeline",
    "SimpleCommand",
    "command_subjects",
    "parse_command",
]

# Long enough for any realistic command line (long text belongs in a file); short enough that
# tree-sitter's worst case between two progress callbacks stays a few ms.
MAX_COMMAND_LENGTH = 10_000
# Accepted commands nest at most a quote or a HEAD@{1} deep; refused ones rarely go past a few
# levels. Deeper input is refused unparsed (nested text is re-read per level by the walkers).
_MAX_NESTING = 64
# Parse nodes the Python walkers may visit: a 10,000-character command of one-letter commands
# (`a;a;...`) has ~20,000; anything bigger is refused.
_MAX_NODES = 8_000
# CPU seconds tree-sitter may spend; ordinary commands need ~0.02 ms. CPU time rather than wall
# time, so a busy machine does not refuse a command that a quiet one accepts.
_PARSE_BUDGET_S = 0.02
_READ_CHUNK = 4096

_local = threading.local()


@functools.cache
def _language() -> Language:
    # Loaded on first use (or by the run warm-up), not at start-up: the app's idle memory.
    import tree_sitter_bash
    from tree_sitter import Language

    return Language(tree_sitter_bash.language())


def _parser() -> Parser:
    # A Parser is not safe to share between threads; one per thread is cheap.
    parser = getattr(_local, "parser", None)
    if parser is None:
        from tree_sitter import Parser

        parser = _local.parser = Parser(_language())
    return parser


def parse_command(command: str) -> ParsedCommand:
    """Parse ``command``; never raises. Check ``.ok`` / ``.problems`` before running anything."""
    try:
        return _parse(command)
    except Exception as exc:  # fail closed: a parser bug must refuse, not crash the caller
        result = ParsedCommand(command if isinstance(command, str) else repr(command))
        result.problems.append(f"internal parser error ({type(exc).__name__}); the command was "
                               "refused")
        return result


def _parse(command: str) -> ParsedCommand:
    if not isinstance(command, str):
        raise TypeError("command must be a string")
    # Cheap bounds first: tree-sitter's error recovery is quadratic on operator floods.
    if len(command) > MAX_COMMAND_LENGTH:
        return _refused(command, f"the command is too long for analysis ({len(command)} "
                        f"characters, limit {MAX_COMMAND_LENGTH}); split it into several shorter "
                        "commands, and write long text to a file with write_file")
    if _nesting_depth(command, _MAX_NESTING) > _MAX_NESTING:
        return _refused(command, "the command is too deeply nested for analysis (limit "
                        f"{_MAX_NESTING} levels of brackets, braces, quotes or substitutions); "
                        "split it into several simpler commands")
    bad: list[str] = []
    chars: list[str] = []
    clean = command.isascii() and not _BAD_ASCII_RE.search(command)
    for ch in "" if clean else command:
        why = _bad_char_name(ch)
        if why is not None:
            if len(bad) < 5:
                msg = (f"{why} is not allowed in commands (use plain spaces, tabs or newlines; "
                       "\\r, NUL, bidi/zero-width and non-ASCII spaces are refused)")
                if msg not in bad:
                    bad.append(msg)
            chars.append(" ")  # keep parsing for deny-rule subjects
        else:
            chars.append(ch)
    # Lone surrogates are refused above (category Cs) and replaced, so this always encodes.
    sanitized = "".join(chars) if bad or not clean else command
    builder = _Builder(sanitized)
    builder.result.source = command
    tree = _parse_tree(builder.data)
    if tree is None:
        return _refused(command, *bad, "the command is too complex to analyse (the parser's time "
                        "budget ran out); split it into several shorter commands")
    root = tree.root_node
    if root.descendant_count > _MAX_NODES:
        return _refused(command, *bad, f"the command is too complex to analyse (more than "
                        f"{_MAX_NODES} syntax nodes); split it into several shorter commands")
    builder.build(root)
    builder.finish(root)
    builder.result.problems[:0] = bad
    return builder.result


def _refused(command: str, *problems: str) -> ParsedCommand:
    return ParsedCommand(command, problems=list(problems))


# Bytes 0x80-0xFF (every byte of a multi-byte UTF-8 character) -> "/"; ASCII unchanged.
# Why "/": see the module docstring.
_ASCII_STAND_IN = bytes(range(0x80)) + b"/" * 0x80


def _parse_tree(data: bytes) -> Tree | None:
    """Parse an ASCII stand-in of ``data`` within the CPU budget; None when it ran out.

    The stand-in keeps every byte offset (one ``/`` per UTF-8 byte), so the tree's offsets index
    ``data`` directly. See the module docstring for why tree-sitter never sees non-ASCII.
    """
    stand_in = data if data.isascii() else data.translate(_ASCII_STAND_IN)
    parser = _parser()
    deadline = time.thread_time() + _PARSE_BUDGET_S
    cancelled = False

    def read(offset: int, _point: object) -> bytes:
        return stand_in[offset:offset + _READ_CHUNK]

    def over_budget(_offset: int, _has_error: bool) -> bool:
        # Called by tree-sitter every ~100 parse operations; True cancels the parse.
        nonlocal cancelled
        cancelled = time.thread_time() > deadline
        return cancelled

    try:
        # The progress callback only works with a read callback, not with a bytes source.
        return parser.parse(read, progress_callback=over_budget)
    except ValueError:
        if not cancelled:
            raise
        parser.reset()  # a cancelled parse would otherwise resume on the next call
        return None


_NEST_TOKEN_RE = re.compile(r"""\\.|\$[({]|[\\'"`(){}\[\]]""", re.DOTALL)
_CLOSER = {"(": ")", "$(": ")", "{": "}", "${": "}", "[": "]", '"': '"', "`": "`"}


def _nesting_depth(text: str, limit: int) -> int:
    """How deeply brackets, braces, quotes and substitutions nest; stops once above ``limit``.

    Approximate but quote-aware, so literal text such as ``awk '{{{...'`` does not count.
    Returns 0 when there are too few opening characters to exceed ``limit`` at all.
    """
    if sum(text.count(c) for c in "({[`\"") <= limit:
        return 0  # every level needs an opening character: the common case stops here
    stack: list[str] = []
    deepest = pos = 0
    while (match := _NEST_TOKEN_RE.search(text, pos)) is not None:
        token, pos = match.group(), match.end()
        inside = stack[-1] if stack else ""
        if token[0] == "\\":
            continue  # escaped character, literal
        if inside == '"':  # in double quotes only substitutions nest
            if token == '"':
                stack.pop()
            elif token in ("$(", "${", "`"):
                stack.append(_CLOSER[token])
        elif token == "'":
            end = text.find("'", pos)  # single-quoted text is literal: skip it
            pos = len(text) if end < 0 else end + 1
        elif token in ")}]" or (token == "`" and inside == "`"):
            if token == inside:
                stack.pop()
            # an unmatched closer is a syntax error; tree-sitter reports it
        else:
            stack.append(_CLOSER[token])
        if len(stack) > deepest:
            deepest = len(stack)
            if deepest > limit:
                break
    return deepest


def command_subjects(command: str | Mapping[str, Any], project_root: object = None) -> list[str]:
    """Permission subjects of a shell command: each simple command's words joined by spaces.

    Raises SubjectError (with every command that could be extracted, including ones nested in
    refused constructs such as ``$(rm -rf x)``) when the command is not fully understood.
    Accepts the tool input mapping too, so it can serve directly as a ToolSpec ``subjects_fn``.
    """
    if isinstance(command, Mapping):
        command = command.get("command", "")
    if not isinstance(command, str):
        raise SubjectError("command must be a string")
    parsed = parse_command(command)
    if parsed.ok:
        return [c.subject for c in parsed.commands]
    partial = [c.subject for c in parsed.all_commands()]
    raise SubjectError("; ".join(parsed.problems) or "command not understood", partial=partial)
