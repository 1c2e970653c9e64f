"""Why the shell parser refuses a command: the messages for the model, and which characters,
keywords, redirections and operators are refused (see app.core.tools.shell.syntax)."""

from __future__ import annotations

import re
import unicodedata

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
_BAD_ASCII_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


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

