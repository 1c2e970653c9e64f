"""The walk over tree-sitter's bash tree that builds a ParsedCommand: accepted simple commands
grouped into pipelines and and-or steps, every refused construct reported, and the commands
nested in refused constructs collected for deny rules (see app.core.tools.shell.syntax)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.tools.shell.refusals import (
    _KEYWORDS,
    _NODE_PROBLEMS,
    _operator_problem,
    _redirect_problem,
)
from app.core.tools.shell.structure import ChainStep, ParsedCommand, Pipeline, SimpleCommand
from app.core.tools.shell.words import lex_word

if TYPE_CHECKING:
    from tree_sitter import Node

_MAX_PROBLEMS = 20
_MAX_LEX_NESTED = 2_000
_SUBST_MARKS = ("$", "`", "<(", ">(")


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


def _first_error(root: Node) -> Node | None:
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_error or n.is_missing or n.type == "ERROR":
            return n
        if n.has_error:
            stack.extend(reversed(n.children))
    return None
