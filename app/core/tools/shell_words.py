"""One shell word: resolve its quotes and escapes, and report what a shell would have expanded
(see app.core.tools.shell_syntax for the rules)."""

from __future__ import annotations

import re

from app.core.tools.shell_refusals import _NODE_PROBLEMS

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

