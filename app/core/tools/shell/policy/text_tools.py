"""Checkers of the text-processing languages: sed scripts and awk programs."""

from __future__ import annotations

import re
from collections.abc import Callable

from app.core.tools.options import OptionTable, ParsedOption
from app.core.tools.shell.policy._helpers import _WRITES, Checker, _parse

# sed: a small scanner over the script, refusing the commands/flags that run programs or write
# files (e, w, W, s///e, s///w). Unknown syntax is refused (fail closed).

_SED_SIMPLE = frozenset("=dDgGhHlnNpPxzF{}!")
_SED_REFUSED = {"w": "the w command (writes a file)", "W": "the W command (writes a file)",
                "e": "the e command (runs a program)"}
_SED_S_FLAGS_REFUSED = {"e": "the s///e flag", "w": "the s///w flag", "W": "the s///w flag"}


class _SedCursor:
    """A position in one sed script, moved past one address or command at a time. The
    ``skip_*`` steps that can fail return the problem that ends the scan (None: go on)."""

    def __init__(self, script: str) -> None:
        self.script = script
        self.pos = 0

    def more(self) -> bool:
        return self.pos < len(self.script)

    def skip_while(self, chars: str) -> None:
        script, pos, n = self.script, self.pos, len(self.script)
        while pos < n and script[pos] in chars:
            pos += 1
        self.pos = pos

    def skip_until(self, chars: str) -> None:
        script, pos, n = self.script, self.pos, len(self.script)
        while pos < n and script[pos] not in chars:
            pos += 1
        self.pos = pos

    def skip_delimited(self, delim: str) -> bool:
        """Move just past the closing ``delim``, honouring backslash escapes; False when the
        line or the script ends first."""
        script, j, n = self.script, self.pos, len(self.script)
        while j < n:
            if script[j] == "\\":
                j += 2
                continue
            if script[j] == delim:
                self.pos = j + 1
                return True
            if script[j] == "\n":
                return False
            j += 1
        return False

    def skip_two_parts(self) -> bool:
        """The ``/A/B/`` of s and y, delimited by the character at the cursor."""
        delim = self.script[self.pos]
        self.pos += 1
        return self.skip_delimited(delim) and self.skip_delimited(delim)

    def skip_addresses(self) -> str | None:
        """Numbers, $, /re/, \\cREc, ranges, steps, +N, ~N, and the trailing !."""
        script, n = self.script, len(self.script)
        while self.pos < n:
            c = script[self.pos]
            if c.isdigit() or c in "$,~+ \t!":
                self.pos += 1
            elif c == "/":
                self.pos += 1
                if not self.skip_delimited("/"):
                    return "unterminated address"
                self.skip_while("IM")
            elif c == "\\" and self.pos + 1 < n:
                self.pos += 2
                if not self.skip_delimited(script[self.pos - 1]):
                    return "unterminated address"
            else:
                break
        return None

    def skip_command(self) -> str | None:
        cmd = self.script[self.pos]
        self.pos += 1
        if cmd in _SED_SIMPLE:
            return None
        if cmd in _SED_REFUSED:
            return _SED_REFUSED[cmd]
        skip_arguments = _SED_ARGUMENTS.get(cmd)
        return f"the command {cmd!r}" if skip_arguments is None else skip_arguments(self)

    # -- the arguments of the commands that take some ------------------------------------------

    def skip_substitute(self) -> str | None:
        if not self.more() or self.script[self.pos] in "\\\n":
            return "unsupported s delimiter"
        if not self.skip_two_parts():
            return "unterminated s command"
        while self.more() and self.script[self.pos] not in ";\n}":
            flag = self.script[self.pos]
            if flag in _SED_S_FLAGS_REFUSED:
                return _SED_S_FLAGS_REFUSED[flag]
            self.pos += 1
        return None

    def skip_transliterate(self) -> str | None:
        if not (self.more() and self.skip_two_parts()):
            return "unterminated y command"
        return None

    def skip_text(self) -> None:
        """a, i, c: text to the end of the line (GNU one-liner form); a backslash escapes."""
        while self.more() and self.script[self.pos] != "\n":
            if self.script[self.pos] == "\\":
                self.pos += 1
            self.pos += 1

    def skip_line(self) -> None:
        self.skip_until("\n")

    def skip_label(self) -> None:
        self.skip_until(";\n")

    def skip_exit_code(self) -> None:
        while self.more() and (self.script[self.pos].isdigit() or self.script[self.pos] in " \t"):
            self.pos += 1


# The commands with arguments, by letter. l is in _SED_SIMPLE, so a length after it scans as
# an address (harmless); r/R read a file: a read, allowed.
_SED_ARGUMENTS: dict[str, Callable[[_SedCursor], str | None]] = {
    "s": _SedCursor.skip_substitute, "y": _SedCursor.skip_transliterate,
    "#": _SedCursor.skip_line, "r": _SedCursor.skip_line, "R": _SedCursor.skip_line,
    **dict.fromkeys("aic", _SedCursor.skip_text),
    **dict.fromkeys(":btTv", _SedCursor.skip_label),
    **dict.fromkeys("qQL", _SedCursor.skip_exit_code),
}


def _sed_script_problem(script: str) -> str | None:
    cursor = _SedCursor(script)
    while True:
        cursor.skip_while(" \t;\n")
        problem = cursor.skip_addresses()
        if problem is not None or not cursor.more():
            return problem
        problem = cursor.skip_command()
        if problem is not None:
            return problem


_SED = OptionTable("n|quiet|silent e|expression= f|file= l|line-length= i|in-place? "
                   "E|r|regexp-extended s|separate z|null-data|zero-terminated u|unbuffered "
                   "b|binary debug posix sandbox follow-symlinks help version")


def _check_sed(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _SED, args)
    if problems:
        return problems
    if parsed.find("--in-place"):
        return [f"`sed -i` is not allowed: {_WRITES}"]
    if parsed.find("--file"):
        return ["`sed -f FILE` is not allowed: the script must be visible on the command line; "
                "use -e 'SCRIPT'"]
    scripts = parsed.values("--expression")
    if not parsed.find("--expression") and parsed.operands:
        scripts = [parsed.operands[0]]  # without -e, the first operand is the script
    for script in scripts:
        problem = _sed_script_problem(script)
        if problem:
            return [f"sed script {script[:40]!r} is not allowed: {problem} — only print/"
                    "substitute style scripts without e/w/W/s///e/s///w are accepted"]
    return []


# awk: the language can run programs (system(), "cmd" | getline, print | "cmd") and write files
# (print > "f"). A full parse is out of scope, so refuse the tokens those need.

_AWK_BAD = [
    (re.compile(r"\bsystem\s*\("), "system() runs a program"),
    (re.compile(r"\bgetline\b"), "getline can read from a program"),
    (re.compile(r"(?<!\|)\|(?!\|)"), "| pipes to or from a program (use || for logical or)"),
    (re.compile(r">(?!=)"), "> / >> write files (for comparisons write `b < a` instead of "
                            "`a > b`, or use >=)"),
    (re.compile(r"\bENVIRON\b"), "ENVIRON reads environment variables"),
    (re.compile(r"@load|@include"), "@load/@include load code"),
    (re.compile(r"\bPROCINFO\b"), "PROCINFO is not allowed"),
]

# The union of gawk's, mawk's and busybox awk's options. They stop at the program text (gawk's
# optstring starts with "+"). `-W NAME` is `--NAME` (gawk) or a mawk -W option; both may be
# abbreviated, so -W values are looked up in the same long-option table.
_AWK = OptionTable(
    "F|field-separator= f|file= v|assign= W= b|characters-as-bytes c|traditional C|copyright "
    "d|dump-variables? D|debug? e|source= E|exec= g|gen-pot h|help i|include= l|load= "
    "L|lint? n|non-decimal-data N|use-lc-numeric o|pretty-print? O|optimize p|profile? "
    "M|bignum P|posix r|re-interval s|no-optimize S|sandbox t|lint-old V|version k|csv "
    "Y Z|locale= dump interactive posix_space random= sprintf= usage",
    permute=False)
_AWK_NO_INLINE = ("--file", "--exec", "--include", "--load")
_AWK_WRITES = ("--dump-variables", "--debug", "--pretty-print", "--profile")


def _check_awk(name: str, args: list[str]) -> list[str]:
    parsed, problems = _parse(name, _AWK, args)
    if problems:
        return problems
    options = []
    for o in parsed.options:
        if o.name != "-W":
            options.append(o)
            continue
        wname = (o.value or "").split("=", 1)[0]
        wopt, error = _AWK.lookup_long(wname)
        if wopt is None:
            return [f"`{name} -W {o.value}` is not supported here: {error or 'unknown -W option'}"]
        options.append(ParsedOption(wopt.canonical, o.value, o.spelled, True, wopt.display))
    for o in options:
        if o.name in _AWK_NO_INLINE:
            return [f"`{name} {o}` is not allowed: the awk program must be given inline (files "
                    "and extensions cannot be checked)"]
        if o.name in _AWK_WRITES:
            return [f"`{name} {o}` is not allowed: {_WRITES}"]
    programs = [o.value for o in options if o.name == "--source" and o.value is not None]
    if not programs and parsed.operands:
        programs = [parsed.operands[0]]
    for program in programs:
        for pattern, why in _AWK_BAD:
            if pattern.search(program):
                return [f"awk program not allowed: {why}"]
    return []


TEXT_CHECKERS: dict[str, Checker] = {
    "sed": _check_sed,
    "awk": _check_awk,
}
