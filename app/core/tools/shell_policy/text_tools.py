"""Checkers of the text-processing languages: sed scripts and awk programs."""

from __future__ import annotations

import re

from app.core.tools.options import OptionTable, ParsedOption
from app.core.tools.shell_policy._helpers import _WRITES, Checker, _parse

# sed: a small scanner over the script, refusing the commands/flags that run programs or write
# files (e, w, W, s///e, s///w). Unknown syntax is refused (fail closed).

_SED_SIMPLE = set("=dDgGhHlnNpPxzF{}!")


def _sed_script_problem(script: str) -> str | None:
    i, n = 0, len(script)

    def skip_ws(j: int) -> int:
        while j < n and script[j] in " \t;\n":
            j += 1
        return j

    def read_delimited(j: int, delim: str) -> int | None:
        """Index just after the closing delimiter, honouring backslash escapes."""
        while j < n:
            if script[j] == "\\":
                j += 2
                continue
            if script[j] == delim:
                return j + 1
            if script[j] == "\n":
                return None
            j += 1
        return None

    while True:
        i = skip_ws(i)
        if i >= n:
            return None
        # addresses: numbers, $, /re/, \cREc, ranges, steps, +N, ~N, and the trailing !
        while i < n:
            c = script[i]
            if c.isdigit() or c in "$,~+ \t!":
                i += 1
            elif c == "/":
                end = read_delimited(i + 1, "/")
                if end is None:
                    return "unterminated address"
                i = end
                while i < n and script[i] in "IM":
                    i += 1
            elif c == "\\" and i + 1 < n:
                end = read_delimited(i + 2, script[i + 1])
                if end is None:
                    return "unterminated address"
                i = end
            else:
                break
        if i >= n:
            return None
        cmd = script[i]
        i += 1
        if cmd in _SED_SIMPLE:
            continue
        if cmd == "#":
            while i < n and script[i] != "\n":
                i += 1
            continue
        if cmd in "s":
            if i >= n or script[i] in "\\\n":
                return "unsupported s delimiter"
            delim = script[i]
            end = read_delimited(i + 1, delim)
            end = read_delimited(end, delim) if end is not None else None
            if end is None:
                return "unterminated s command"
            i = end
            while i < n and script[i] not in ";\n}":
                if script[i] in "ew":
                    return f"the s///{script[i]} flag"
                if script[i] in "W":
                    return "the s///w flag"
                i += 1
            continue
        if cmd == "y":
            if i >= n:
                return "unterminated y command"
            delim = script[i]
            end = read_delimited(i + 1, delim)
            end = read_delimited(end, delim) if end is not None else None
            if end is None:
                return "unterminated y command"
            i = end
            continue
        if cmd in "aic":  # text to end of line (GNU one-liner form)
            while i < n and script[i] != "\n":
                if script[i] == "\\":
                    i += 1
                i += 1
            continue
        if cmd in "rR":  # read a file: a read, allowed
            while i < n and script[i] != "\n":
                i += 1
            continue
        if cmd in ":btTv":
            while i < n and script[i] not in ";\n":
                i += 1
            continue
        if cmd in "qQlL":
            while i < n and (script[i].isdigit() or script[i] in " \t"):
                i += 1
            continue
        if cmd in "wW":
            return f"the {cmd} command (writes a file)"
        if cmd == "e":
            return "the e command (runs a program)"
        return f"the command {cmd!r}"

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
