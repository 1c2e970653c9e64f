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
"""

from __future__ import annotations

import functools
import re
import threading
import time
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.tools.base import SubjectError

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Parser, Tree

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
_MAX_PROBLEMS = 20
_MAX_LEX_NESTED = 2_000
_SUBST_MARKS = ("$", "`", "<(", ">(")

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


# --- messages -----------------------------------------------------------------------------

_HINT_FILE = "use the write_file/edit_file tools to write files; output is returned to you"

_NODE_PROBLEMS: dict[str, str] = {
    "command_substitution": "command substitution $(...) or `...` is not allowed; run the inner "
    "command as its own step and use its output",
    "process_substitution": "process substitution <(...) / >(...) is not allowed; run the "
    "commands separately",
    "simple_expansion": "variable expansion $NAME is not allowed (no shell expands it); write the "
    "value literally",
    "expansion": "parameter expansion ${...} is not allowed (no shell expands it); write the "
    "value literally",
    "arithmetic_expansion": "arithmetic expansion $((...)) is not allowed; write the number "
    "literally",
    "ansi_c_string": "ANSI-C quoting $'...' is not supported; use '...' or \"...\" quoting",
    "translated_string": "locale quoting $\"...\" is not supported; use \"...\" quoting",
    "file_redirect": f"redirection (>, >>, <, 2>&1, &>) is not allowed; {_HINT_FILE}",
    "heredoc_redirect": "here-documents (<<) are not allowed; pass the text as an argument or "
    "write it with write_file",
    "herestring_redirect": "here-strings (<<<) are not allowed; pass the text as an argument",
    "redirected_statement": f"redirection is not allowed; {_HINT_FILE}",
    "subshell": "subshells ( ... ) are not allowed; chain the commands with && or ;",
    "compound_statement": "command groups { ...; } and (( ... )) are not allowed; chain the "
    "commands with && or ;",
    "function_definition": "function definitions are not allowed",
    "if_statement": "if/then/fi is not allowed; run the commands one by one and decide yourself "
    "(or use && / ||)",
    "for_statement": "for loops are not allowed; run each command yourself",
    "c_style_for_statement": "for loops are not allowed; run each command yourself",
    "while_statement": "while/until loops are not allowed",
    "case_statement": "case statements are not allowed",
    "test_command": "[[ ... ]] tests are not allowed",
    "negated_command": "negation `! cmd` is not allowed; use || / && instead",
    "variable_assignment": "variable assignments (NAME=value, also as a prefix `NAME=value cmd`) "
    "are not allowed; environment variables cannot be set",
    "variable_assignments": "variable assignments (NAME=value) are not allowed",
    "declaration_command": "export/declare/local/readonly/typeset are not allowed; environment "
    "variables cannot be set",
    "unset_command": "unset is not allowed",
    "comment": "comments (# ...) are not allowed; remove them",
    "brace_expression": "brace expansion {a,b} / {1..3} is not allowed; write the words out",
}

_KEYWORDS = frozenset({
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
    "do", "done", "in", "function", "time", "coproc", "{", "}", "!", "[[", "]]",
})

_OK_SPACE = frozenset(" \t\n")


def _bad_char_name(ch: str) -> str | None:
    """Why a character is refused anywhere in a command, or None when it is fine."""
    if ch in _OK_SPACE:
        return None
    code = ord(ch)
    if code < 0x80:
        if code < 0x20 or code == 0x7F:
            return f"control character U+{code:04X}"
        return None
    cat = unicodedata.category(ch)
    if cat in ("Cc", "Cf", "Co", "Cs", "Zl", "Zp", "Zs"):
        name = unicodedata.name(ch, "")
        return f"character U+{code:04X}{' ' + name if name else ''}"
    return None


# --- words ----------------------------------------------------------------------------------

_BAD_ASCII_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# Words made only of these characters are literal as written (fast path for lex_word).
_PLAIN_WORD_RE = re.compile(r"[A-Za-z0-9_./:=@%+,^-]+")
_BRACE_RE = re.compile(r"\{.*(,|\.\.).*\}", re.DOTALL)  # conservative: any { , } order


def lex_word(text: str) -> tuple[str, list[str]]:
    """Resolve quotes and escapes of one shell word; report what a shell would have expanded.

    Returns the literal value and the problems found (empty list when the word is literal).
    """
    if _PLAIN_WORD_RE.fullmatch(text):
        return text, []
    out: list[str] = []
    shape: list[str] = []  # unquoted chars kept, quoted ones masked: for brace detection
    problems: list[str] = []
    i, n = 0, len(text)

    def dollar(j: int) -> str:
        nxt = text[j + 1] if j + 1 < n else ""
        if text.startswith("$((", j):
            return _NODE_PROBLEMS["arithmetic_expansion"]
        if nxt == "(":
            return _NODE_PROBLEMS["command_substitution"]
        if nxt == "{":
            return _NODE_PROBLEMS["expansion"]
        if nxt == "'":
            return _NODE_PROBLEMS["ansi_c_string"]
        if nxt == '"':
            return _NODE_PROBLEMS["translated_string"]
        if nxt == "":
            return "a bare $ is not allowed; quote it as '$'"
        return _NODE_PROBLEMS["simple_expansion"]

    while i < n:
        c = text[i]
        if c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                problems.append("unterminated single quote")
                out.append(text[i + 1:])
                break
            out.append(text[i + 1:j])
            shape.append("_" * (j - i + 1))
            i = j + 1
        elif c == '"':
            j = i + 1
            closed = False
            while j < n:
                d = text[j]
                if d == '"':
                    closed = True
                    break
                if d == "\\" and j + 1 < n:
                    e = text[j + 1]
                    if e == "\n":
                        problems.append("backslash-newline line continuation is not allowed; "
                                        "put the command on one line")
                    elif e in '$`"\\':
                        out.append(e)
                    else:
                        out.append("\\" + e)
                    j += 2
                    continue
                if d == "$":
                    problems.append(dollar(j))
                elif d == "`":
                    problems.append(_NODE_PROBLEMS["command_substitution"])
                out.append(d)
                j += 1
            if not closed:
                problems.append("unterminated double quote")
            shape.append("_" * (j - i + 1))
            i = j + 1
        elif c == "\\":
            if i + 1 >= n:
                problems.append("a trailing backslash is not allowed")
                i += 1
                continue
            e = text[i + 1]
            if e == "\n":
                problems.append("backslash-newline line continuation is not allowed; put the "
                                "command on one line")
            else:
                out.append(e)
            shape.append("__")
            i += 2
        else:
            if c == "$":
                problems.append(dollar(i))
            elif c == "`":
                problems.append(_NODE_PROBLEMS["command_substitution"])
            elif c in "*?[":
                problems.append(f"unquoted glob character {c!r} is not allowed (no shell expands "
                                "it); quote the pattern to pass it literally, e.g. "
                                "find . -name '*.py', or use the glob_search tool")
            elif c == "~" and (i == 0 or (shape and shape[-1][-1] in "=:")):
                # bash also expands ~ after = or : in assignment-like words (--prefix=~/x)
                problems.append("tilde expansion ~ is not allowed (no shell expands it); write "
                                "the path explicitly or relative to the project")
            elif c in " \t\n|&;<>()":
                problems.append(f"unexpected shell metacharacter {c!r} inside a word; quote it")
            out.append(c)
            shape.append(c)
            i += 1
    if _BRACE_RE.search("".join(shape)):
        problems.append(_NODE_PROBLEMS["brace_expression"])
    return "".join(out), problems


# --- parsing ------------------------------------------------------------------------------

class _Builder:
    def __init__(self, source: str) -> None:
        self.source = source
        # The original text: tree-sitter parsed an ASCII stand-in with the same byte offsets
        # (see _parse_tree), so every word and message is read from here.
        self.data = source.encode("utf-8")
        self.ascii = self.data.isascii()
        self.result = ParsedCommand(source)
        self.covered: list[tuple[int, int]] = []
        self.accepted: set[tuple[int, int]] = set()

    # helpers
    def text(self, node: Node) -> str:
        return self.slice(node.start_byte, node.end_byte)

    def slice(self, a: int, b: int) -> str:
        if not self.ascii and not (self.on_char_boundary(a) and self.on_char_boundary(b)):
            # The stand-in split a placeholder run, so the parse does not match the original
            # characters; refuse rather than run a word with half a character.
            self.problem("could not split the command into words at a non-ASCII character; "
                         "separate arguments with spaces and quote them")
        return self.data[a:b].decode("utf-8", "replace")

    def on_char_boundary(self, offset: int) -> bool:
        # UTF-8 continuation bytes are 0b10xxxxxx; an offset there is inside a character.
        return offset >= len(self.data) or self.data[offset] & 0xC0 != 0x80

    def preview(self, node: Node, limit: int = 40) -> str:
        """The start of a node's text for messages; bounded, so nested errors stay linear."""
        a = node.start_byte
        raw = self.data[a:min(node.end_byte, a + 4 * limit)].decode("utf-8", "ignore")
        return raw.strip()[:limit]

    def problem(self, message: str) -> None:
        problems = self.result.problems
        # Capped: thousands of distinct syntax errors help no one, and the dedup scan would
        # turn quadratic.
        if len(problems) < _MAX_PROBLEMS and message not in problems:
            problems.append(message)

    def refuse_one(self, node: Node) -> None:
        if node.type == "file_redirect":
            self.problem(_redirect_problem(self.text(node)))
        elif node.type in _NODE_PROBLEMS and not node.is_error:
            self.problem(_NODE_PROBLEMS[node.type])
        else:
            self.refuse(node)

    def refuse(self, node: Node) -> None:
        kind = node.type
        if node.is_error or kind == "ERROR":
            self.problem(f"the command could not be parsed (syntax error near "
                         f"{self.preview(node)!r}); check quotes and operators")
        elif node.is_missing:
            self.problem("the command is incomplete (something is missing, e.g. after && or a "
                         "quote)")
        elif kind in _NODE_PROBLEMS:
            # Report every refused construct inside, so the model can fix them all at once.
            stack = [node]
            while stack:
                n = stack.pop()
                if n.type == "file_redirect":
                    self.problem(_redirect_problem(self.text(n)))
                elif n.type in _NODE_PROBLEMS and not (
                    n.type == "redirected_statement"
                    and any(c.type.endswith("redirect") for c in n.children)
                ):
                    self.problem(_NODE_PROBLEMS[n.type])
                elif n.type in ("&", "|&"):
                    self.problem(_operator_problem(n.type))
                stack.extend(reversed(n.children))
        elif kind in ("&", "|&", ";;", "&&", "||", "|", ";"):
            self.problem(_operator_problem(kind))
        else:
            self.problem(f"shell construct {kind!r} ({self.preview(node)!r}) is not allowed")

    # structure
    def build(self, root: Node) -> None:
        expect_stmt = True
        pending: str | None = None
        prev_end = root.start_byte
        for child in root.children:
            gap = self.slice(prev_end, child.start_byte)
            if "\n" in gap and not expect_stmt:
                pending, expect_stmt = ";", True
            kind = child.type
            if kind == ";":
                if expect_stmt:
                    self.problem("empty command before ';'")
                pending, expect_stmt = ";", True
                self.covered.append((child.start_byte, child.end_byte))
            elif kind == "&":
                self.problem(_operator_problem("&"))
                pending, expect_stmt = ";", True
            elif child.is_named and not child.is_error and kind != "comment":
                if not expect_stmt:
                    self.problem("two commands without a separator; join them with ; or &&")
                self.statement(child, pending if self.result.steps else None)
                pending, expect_stmt = None, False
            else:
                self.refuse(child)
            prev_end = child.end_byte
        if not self.result.steps and not self.result.problems:
            self.problem("empty command")
        elif pending in ("&&", "||"):
            self.problem(f"the command ends with {pending}; add the next command")

    def statement(self, node: Node, first_op: str | None) -> None:
        # tree-sitter-bash nests lists and pipelines inconsistently (`a | b | c && d` comes out
        # as pipeline(a, list(pipeline(b, c), d))), so flatten both into source order and regroup
        # with bash precedence: `|` binds tighter than `&&` / `||`. Iterative: deep chains must
        # not hit the recursion limit.
        items: list[Node] = []
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type in ("list", "pipeline"):
                stack.extend(reversed(n.children))
            else:
                items.append(n)
        op = first_op
        commands: list[SimpleCommand] = []
        complete = True
        expect_operand = True
        for item in items:
            if expect_operand:
                cmd = self.simple(item)
                if cmd is not None:
                    commands.append(cmd)
                else:
                    complete = False
                expect_operand = False
            elif item.type in ("&&", "||", "|"):
                self.covered.append((item.start_byte, item.end_byte))
                if item.type != "|":
                    if commands and complete:
                        self.result.steps.append(ChainStep(op, Pipeline(commands)))
                    commands, complete, op = [], True, item.type
                expect_operand = True
            else:
                self.refuse(item)
                expect_operand = item.type == "|&"
        if expect_operand:
            self.problem("the command is incomplete (nothing after &&, || or |)")
        if commands and complete:
            self.result.steps.append(ChainStep(op, Pipeline(commands)))

    def simple(self, node: Node) -> SimpleCommand | None:
        if node.type != "command":
            self.refuse(node)
            return None
        words: list[str] = []
        ok = True
        prev_end: int | None = None
        for child in node.children:
            if prev_end is not None:
                gap = self.slice(prev_end, child.start_byte)
                if gap == "" or gap.strip(" \t"):
                    ok = False
                    if "\\\n" in gap:
                        self.problem("backslash-newline line continuation is not allowed; put the "
                                     "command on one line")
                    else:
                        self.problem(f"could not split {self.preview(node, 60)!r} into words "
                                     "unambiguously; separate arguments with spaces and quote "
                                     "them")
            prev_end = child.end_byte
            if child.type == "command_name":
                if words:
                    ok = False
                    self.problem("unexpected command name position")
                value = self.word(child)
                if value is None:
                    ok = False
                    continue
                if value in _KEYWORDS:
                    ok = False
                    self.problem(f"shell keyword {value!r} is not allowed as a command")
                words.append(value)
            elif not words:
                # Before the command name only assignments / redirects can appear.
                ok = False
                self.refuse(child)
            elif child.is_named and child.type not in (
                "variable_assignment", "file_redirect", "heredoc_redirect",
                "herestring_redirect", "ERROR",
            ):
                value = self.word(child)
                if value is None:
                    ok = False
                else:
                    words.append(value)
            else:
                ok = False
                self.refuse(child)
        if not ok or not words:
            if not words and ok:
                self.problem("empty command")
            return None
        self.covered.append((node.start_byte, node.end_byte))
        self.accepted.add((node.start_byte, node.end_byte))
        return SimpleCommand(words, self.text(node))

    def word(self, node: Node) -> str | None:
        """The literal value of a word node, or None after reporting why it is not literal."""
        bad = False
        stack = [node]
        while stack:
            n = stack.pop()
            if n.is_missing or n.is_error or n.type in _NODE_PROBLEMS:
                self.refuse_one(n)  # not refuse(): this walk already visits the descendants
                bad = True
            stack.extend(n.children)
        value, problems = lex_word(self.text(node))
        if bad:  # the tree already named the construct; skip the lexer's echo of its insides
            problems = [p for p in problems if not p.startswith("unexpected shell metachar")]
        for p in problems:
            self.problem(p)
        if bad or problems:
            return None
        return value

    def finish(self, root: Node) -> None:
        if root.has_error:
            first = _first_error(root)
            if first is not None:
                self.refuse(first)
            else:
                self.problem("the command could not be parsed; check quotes and operators")
        # Every byte outside accepted commands and operators must be plain whitespace: catches
        # text tree-sitter dropped or glued into a node we did not inspect.
        pos = 0
        for a, b in sorted(self.covered):
            if a > pos:
                self.check_gap(pos, a)
            pos = max(pos, b)
        if pos < len(self.data):
            self.check_gap(pos, len(self.data))
        if self.result.problems:  # without problems every command was accepted
            self.collect_nested(root)

    def check_gap(self, a: int, b: int) -> None:
        gap = self.slice(a, b)
        if not gap.strip(" \t\n"):
            return
        if "\\\n" in gap:
            self.problem("backslash-newline line continuation is not allowed; put the command "
                         "on one line")
        elif not self.result.problems:
            self.problem(f"unexpected text {gap.strip()[:40]!r}; the command could not be "
                         "understood")

    def collect_nested(self, root: Node) -> None:
        """Best-effort words of every command the executor will not run, for deny rules."""
        stack = [root]
        found: list[tuple[int, SimpleCommand]] = []
        while stack:
            n = stack.pop()
            if n.type in ("command", "declaration_command", "unset_command") and (
                (n.start_byte, n.end_byte) not in self.accepted
            ):
                words = []
                for child in n.children:
                    if child.type in ("file_redirect", "heredoc_redirect",
                                      "herestring_redirect", "comment") or (
                        child.type == "variable_assignment" and n.type == "command"
                    ):
                        continue
                    raw = self.text(child)
                    # `$`/backticks would make lex_word refuse anyway; skipping them (and huge
                    # words) keeps deeply nested input linear.
                    if len(raw) > _MAX_LEX_NESTED or any(t in raw for t in _SUBST_MARKS):
                        words.append(" ".join(raw.split()))
                        continue
                    value, problems = lex_word(raw)
                    words.append(" ".join(raw.split()) if problems else value)
                words = [w for w in words if w]
                if words:
                    found.append((n.start_byte, SimpleCommand(words, self.text(n))))
            stack.extend(n.children)
        found.sort(key=lambda item: item[0])
        self.result.nested = [cmd for _, cmd in found]


def _redirect_problem(text: str) -> str:
    compact = "".join(text.split())
    if re.fullmatch(r"\d*>&\d+", compact):
        return (f"redirection {compact!r} is not allowed and not needed: stdout and stderr are "
                "both returned to you; remove it")
    if compact.endswith("/dev/null"):
        return (f"redirection {compact!r} is not allowed; remove it (output is returned to you "
                "and capped, so there is no need to discard it)")
    return _NODE_PROBLEMS["file_redirect"]


def _operator_problem(op: str) -> str:
    if op == "&":
        return "background execution with & is not allowed; use the background option instead"
    if op == "|&":
        return f"|& (pipe with stderr) is a redirection and is not allowed; {_HINT_FILE}"
    return f"unexpected operator {op!r}"


def _first_error(root: Node) -> Node | None:
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_error or n.is_missing or n.type == "ERROR":
            return n
        if n.has_error:
            stack.extend(reversed(n.children))
    return None


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


def command_subjects(command: str | Mapping[str, Any], working_dir: object = None) -> list[str]:
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
