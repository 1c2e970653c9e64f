"""One shell word: resolve its quotes and escapes, and report what a shell would have expanded
(see app.core.tools.shell.syntax for the rules)."""

from __future__ import annotations

import re

from app.core.tools.shell.refusals import _NODE_PROBLEMS

# Words made only of these characters are literal as written (fast path for lex_word).
_PLAIN_WORD_RE = re.compile(r"[A-Za-z0-9_./:=@%+,^-]+")
_BRACE_RE = re.compile(r"\{.*(,|\.\.).*\}", re.DOTALL)  # conservative: any { , } order
_LINE_CONTINUATION = ("backslash-newline line continuation is not allowed; put the command on "
                      "one line")
_GLOB = ("unquoted glob character {!r} is not allowed (no shell expands it); quote the pattern to "
         "pass it literally, e.g. find . -name '*.py', or use the glob_search tool")
_TILDE = ("tilde expansion ~ is not allowed (no shell expands it); write the path explicitly or "
          "relative to the project")
_METACHARACTER = "unexpected shell metacharacter {!r} inside a word; quote it"
# What the character after a $ makes of it ("": the word ends there); other characters: a
# variable. "$((" is checked before this table.
_AFTER_DOLLAR = {
    "(": _NODE_PROBLEMS["command_substitution"],
    "{": _NODE_PROBLEMS["expansion"],
    "'": _NODE_PROBLEMS["ansi_c_string"],
    '"': _NODE_PROBLEMS["translated_string"],
    "": "a bare $ is not allowed; quote it as '$'",
}
# The unquoted characters that need a look (everything else is literal).
_UNQUOTED_SPECIAL = frozenset("$`*?[~ \t\n|&;<>()")


def _dollar_problem(text: str, at: int) -> str:
    """What a shell would expand at the ``$`` at ``at``."""
    if text.startswith("$((", at):
        return _NODE_PROBLEMS["arithmetic_expansion"]
    return _AFTER_DOLLAR.get(text[at + 1:at + 2], _NODE_PROBLEMS["simple_expansion"])


class _WordLexer:
    """One word being resolved: its literal value so far (``out``), its shape for brace
    detection (unquoted characters kept, quoted ones masked) and the problems found. Each
    ``*_at`` step lexes one quoted part, escape or character and returns the index after it."""

    __slots__ = ("out", "problems", "shape", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.out: list[str] = []
        self.shape: list[str] = []
        self.problems: list[str] = []

    def lex(self) -> tuple[str, list[str]]:
        text, out, shape = self.text, self.out, self.shape
        i, n = 0, len(text)
        while i < n:
            c = text[i]
            if c == "'":
                i = self.single_quoted_at(i)
            elif c == '"':
                i = self.double_quoted_at(i)
            elif c == "\\":
                i = self.escape_at(i)
            else:
                if c in _UNQUOTED_SPECIAL:
                    self.check_unquoted(i)
                out.append(c)
                shape.append(c)
                i += 1
        if _BRACE_RE.search("".join(shape)):
            self.problems.append(_NODE_PROBLEMS["brace_expression"])
        return "".join(out), self.problems

    def single_quoted_at(self, i: int) -> int:
        text = self.text
        j = text.find("'", i + 1)
        if j < 0:
            self.problems.append("unterminated single quote")
            self.out.append(text[i + 1:])
            return len(text)
        self.out.append(text[i + 1:j])
        self.shape.append("_" * (j - i + 1))
        return j + 1

    def double_quoted_at(self, i: int) -> int:
        text, out, problems = self.text, self.out, self.problems
        j, n = i + 1, len(text)
        closed = False
        while j < n:
            d = text[j]
            if d == '"':
                closed = True
                break
            if d == "\\" and j + 1 < n:
                e = text[j + 1]
                if e == "\n":
                    problems.append(_LINE_CONTINUATION)
                else:
                    out.append(e if e in '$`"\\' else "\\" + e)
                j += 2
                continue
            if d == "$":
                problems.append(_dollar_problem(text, j))
            elif d == "`":
                problems.append(_NODE_PROBLEMS["command_substitution"])
            out.append(d)
            j += 1
        if not closed:
            problems.append("unterminated double quote")
        self.shape.append("_" * (j - i + 1))
        return j + 1

    def escape_at(self, i: int) -> int:
        if i + 1 >= len(self.text):
            self.problems.append("a trailing backslash is not allowed")
            return i + 1
        e = self.text[i + 1]
        if e == "\n":
            self.problems.append(_LINE_CONTINUATION)
        else:
            self.out.append(e)
        self.shape.append("__")
        return i + 2

    def check_unquoted(self, i: int) -> None:
        c, shape = self.text[i], self.shape
        if c == "$":
            self.problems.append(_dollar_problem(self.text, i))
        elif c == "`":
            self.problems.append(_NODE_PROBLEMS["command_substitution"])
        elif c in "*?[":
            self.problems.append(_GLOB.format(c))
        elif c == "~":
            # bash also expands ~ after = or : in assignment-like words (--prefix=~/x)
            if i == 0 or (shape and shape[-1][-1] in "=:"):
                self.problems.append(_TILDE)
        else:
            self.problems.append(_METACHARACTER.format(c))


def lex_word(text: str) -> tuple[str, list[str]]:
    """Resolve quotes and escapes of one shell word; report what a shell would have expanded.

    Returns the literal value and the problems found (empty list when the word is literal).
    """
    if _PLAIN_WORD_RE.fullmatch(text):
        return text, []
    return _WordLexer(text).lex()
